package claudeplugin

import (
	"slices"
	"strings"
	"testing"
)

// stopHook is a hooks.json that runs command, a JSON string, on Stop.
func stopHook(command string) string {
	return `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ` + command + `, "timeout": 5}]}]}}`
}

// A reachTest is a plugin of one hook and what its tool should be given.
type reachTest struct {
	name              string
	files             map[string]string
	wantFiles         []string
	wantCaps, wantEnv []string
	wantWiden         string // in a note, "" for none
}

var reachTests = []reachTest{
	{
		name: "quoted and commented words are no needs",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"bash \"${CLAUDE_PLUGIN_ROOT}/stop.sh\""`),
			"stop.sh":          "#!/bin/sh\n# rm -rf ~/x; curl it\necho 'rm $SECRET' \"curl > x\" >&2  # > out\nexit 0\n",
		},
		wantFiles: []string{"stop.sh"},
		wantCaps:  []string{"filesystem_read", "subprocess"},
		wantEnv:   []string{"PATH", "TMPDIR"},
	},
	{
		name: "writes, network and variables a shell script reads",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"bash \"${CLAUDE_PLUGIN_ROOT}/stop.sh\""`),
			"stop.sh":          "#!/bin/sh\nout=\"$XDG_STATE_HOME/x\"\nwget -q -O- \"$URL\" > \"$out\"\ncd ~/src\n",
		},
		wantFiles: []string{"stop.sh"},
		wantCaps:  []string{"filesystem_read", "filesystem_write", "network", "subprocess"},
		wantEnv:   []string{"HOME", "PATH", "TMPDIR", "URL", "XDG_STATE_HOME"},
	},
	{
		name: "python modules beside the script and from the root",
		files: map[string]string{
			"hooks/hooks.json":   stopHook(`"python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/stop.py\""`),
			"hooks/stop.py":      "import os\nfrom lib import util\nimport near\nprint(os.getenv(\"GREETING\"))\n",
			"hooks/near.py":      "X = 1\n",
			"lib/__init__.py":    "",
			"lib/util.py":        "import requests\n",
			"lib/other.py":       "",
			"hooks/unrelated.py": "",
		},
		wantFiles: []string{"hooks/near.py", "hooks/stop.py", "lib/__init__.py", "lib/util.py"},
		wantCaps:  []string{"filesystem_read", "network", "subprocess"},
		wantEnv:   []string{"GREETING", "PATH", "TMPDIR"},
		wantWiden: "lib/other.py",
	},
	{
		name: "a program that is no text claims everything",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"\"${CLAUDE_PLUGIN_ROOT}/bin/stop\""`),
			"bin/stop":         "#!\x00\x01\x02",
		},
		wantFiles: []string{"bin/stop"},
		wantCaps:  allCapabilities,
		wantEnv:   []string{"PATH", "TMPDIR"},
		wantWiden: "bin/stop is no text dalo can read",
	},
	{
		name: "a file a script sources under ${CLAUDE_PLUGIN_ROOT} is read too",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"bash \"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\""`),
			"hooks/run.sh":     "#!/bin/bash\n. \"${CLAUDE_PLUGIN_ROOT}/lib/x.sh\"\nsource \"$CLAUDE_PLUGIN_ROOT/lib/y.sh\"\n",
			"lib/x.sh":         "curl -s \"$URL\"\n",
			"lib/y.sh":         "echo y\n",
			"lib/z.sh":         "echo z\n",
		},
		wantFiles: []string{"hooks/run.sh", "lib/x.sh", "lib/y.sh"},
		wantCaps:  []string{"filesystem_read", "network", "subprocess"},
		wantEnv:   []string{"PATH", "TMPDIR", "URL"},
		wantWiden: "lib/z.sh",
	},
	{
		name: "a script in a language dalo does not read claims everything",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"perl \"${CLAUDE_PLUGIN_ROOT}/hook.pl\""`),
			"hook.pl":          "use LWP::Simple;\nget($ENV{URL});\n",
		},
		wantFiles: []string{"hook.pl"},
		wantCaps:  allCapabilities,
		wantEnv:   []string{"PATH", "TMPDIR"},
		wantWiden: "hook.pl is in a language dalo does not read",
	},
	{
		name: "a #! line is read by its interpreter's name, not by letters in its path",
		files: map[string]string{
			"hooks/hooks.json": stopHook(`"\"${CLAUDE_PLUGIN_ROOT}/bin/stop\""`),
			"bin/stop":         "#!/usr/share/ruby/bin/ruby\nputs 1\n",
		},
		wantFiles: []string{"bin/stop"},
		wantCaps:  allCapabilities,
		wantEnv:   []string{"PATH", "TMPDIR"},
		wantWiden: "bin/stop is in a language dalo does not read",
	},
}

// TestReach: what each imported hook's tool is given is what the text of
// its command and the files it names show it needs, and no more.
func TestReach(t *testing.T) {
	for _, tc := range reachTests {
		t.Run(tc.name, func(t *testing.T) {
			tc.files[".claude-plugin/plugin.json"] = `{"name": "p", "description": "d"}`
			_, rep, err := Convert(writePlugin(t, tc.files), options(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Hooks) != 1 {
				t.Fatalf("hooks %+v, not imported %+v", rep.Hooks, rep.NotImported)
			}
			h := rep.Hooks[0]
			if !slices.Equal(h.Files, tc.wantFiles) {
				t.Errorf("files %q, want %q", h.Files, tc.wantFiles)
			}
			caps, env := names(h.Capabilities), names(h.Env)
			sortedCaps := slices.Sorted(slices.Values(tc.wantCaps))
			if !slices.Equal(caps, sortedCaps) {
				t.Errorf("capabilities %q, want %q", caps, sortedCaps)
			}
			if !slices.Equal(env, tc.wantEnv) {
				t.Errorf("env %q, want %q", env, tc.wantEnv)
			}
			widen := strings.Join(append(h.Widen, rep.Widen...), "\n")
			if tc.wantWiden == "" && widen != "" || !strings.Contains(widen, tc.wantWiden) {
				t.Errorf("notes %q, want one holding %q", widen, tc.wantWiden)
			}
		})
	}
}
