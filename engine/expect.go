package engine

import (
	"encoding/json"
	"regexp"
	"strconv"
	"sync"

	"dalo/plan"
)

// limitRef matches where an @expect text names a limit of the rules,
// {#Limits.id_chars}: the text says the number the rules hold, never a
// copy of it.
var limitRef = regexp.MustCompile(`\{#Limits\.([a-z_]+)\}`)

// limitValues is each field of #Limits by its name, as a decimal.
var limitValues = sync.OnceValue(func() map[string]string {
	b, err := json.Marshal(plan.DraftLimits)
	if err != nil {
		panic(err)
	}
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strconv.FormatInt(v, 10)
	}
	return out
})

// expandExpect is the @expect text s with each limit it names replaced by
// its value. A name #Limits lacks stays as written, which TestExpectLimits
// catches.
func expandExpect(s string) string {
	return limitRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := limitValues()[limitRef.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}
