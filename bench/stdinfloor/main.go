// Command stdinfloor reads its standard input to the end and exits: the
// least a Go program a harness starts for a hook does. bench/dispatch.sh
// measures dalo's harness entry against it plus the handler run directly.
package main

import (
	"io"
	"os"
)

func main() {
	io.Copy(io.Discard, os.Stdin)
}
