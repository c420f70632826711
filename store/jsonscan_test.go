package store

import "testing"

// A document the scanner refuses gets a position and words for what is
// there; a byte order mark is named, not shown as the character 'ï'.
func TestScanJSONErrors(t *testing.T) {
	tests := []struct{ doc, want string }{
		{utf8BOM + `{"hooks": {}}`, "1:1: not valid JSON: the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow and the harness would not read either; save the file without it"},
		{utf8BOM, "1:1: not valid JSON: the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow and the harness would not read either; save the file without it"},
		{"{,", "1:2: not valid JSON: expected a string key"},
		{"{}\n{}", `2:1: not valid JSON: unexpected '{' after the top-level value`},
		{"\xff", "1:1: not valid JSON: not UTF-8"},
	}
	for _, tt := range tests {
		_, err := scanJSON([]byte(tt.doc))
		if err == nil || err.Error() != tt.want {
			t.Errorf("scanJSON(%q) = %v, want %s", tt.doc, err, tt.want)
		}
	}
	if _, err := scanJSON([]byte(`{"a": "` + utf8BOM + `"}`)); err != nil {
		t.Errorf("U+FEFF inside a string is text: %v", err)
	}
}
