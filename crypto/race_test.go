//go:build race

package crypto

// raceEnabled: under the race detector sync.Pool drops items at random on
// purpose, so allocation counts measure the detector, not the code.
const raceEnabled = true
