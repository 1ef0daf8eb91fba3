package backend

import "testing"

// Every store's ids are well-formed; hand-made words are not.
func TestWellFormedVersionID(t *testing.T) {
	for id, want := range map[string]bool{
		"null":                             true,
		"Rb_l2T8UHDkFEwCgJjhlgPOZC0qJ.vpD": true, // S3
		"3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo":                    true, // S3, early
		"a8b7c325-0501-4fde-8ff4-ff11bf4eda6c":                                                true, // moto, MinIO
		"01K97XE6PJQ1A4X5TJFDHK4EMC":                                                          true, // versitygw
		"423be31a0e2d5dd0d264d4530e0310d4":                                                    true, // embedded
		"4_z27c88f1d182b150646ff0b16_f1004ba650fe24e6b_d20180809_m012944_c002_v0001095_t0003": true, // Backblaze B2
		"":                            false,
		"v1":                          false,
		"invalid_versionId":           false,
		"invalid_version_id":          false,
		"non_existing_version_id":     false,
		"../../secret.txt":            false,
		"01K97XE6PJQ1A4X5TJFDHK4EM!":  false,
		"01K97XE6PJQ1A4X5TJFDHK4EM C": false,
	} {
		if got := WellFormedVersionID(id); got != want {
			t.Errorf("WellFormedVersionID(%q) = %v, want %v", id, got, want)
		}
	}
}
