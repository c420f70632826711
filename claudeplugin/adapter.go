package claudeplugin

import (
	_ "embed"
	"strconv"
	"strings"
)

// AdapterFile is the name of the adapter in an imported package.
const AdapterFile = "claude-hook.sh"

//go:embed adapter.sh
var adapterSH string

//go:embed adapter.awk
var adapterAWK string

// Adapter returns claude-hook.sh, the handler adapter of an imported
// package, cutting result texts to textLimit bytes (the rules'
// result_text_bytes: a longer text would make the dispatcher refuse the
// result, and a refused deny would let the action through).
func Adapter(textLimit int) []byte {
	s := strings.Replace(adapterSH, "@TEXT_LIMIT@", strconv.Itoa(textLimit), 1)
	return []byte(strings.Replace(s, "@AWK@", adapterAWK, 1))
}
