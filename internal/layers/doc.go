// Package layers holds no code, only a test that keeps every package of the
// module to the imports its row of the layers table allows (the table in
// layers_test.go, drawn from docs/ARCHITECTURE.md's package table).
package layers
