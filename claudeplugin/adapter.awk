# Maps the answer of a Claude Code hook command to one portable result.
# Variables: mode (stdout: the command exited 0, this is its stdout; exit2:
# it exited 2, this is its stderr), event, effect, limit (the byte limit of
# the text of a result, from the rules). Prints the result, or a message
# and exits 3 for a failure. Kept free of single quotes: claude-hook.sh
# holds it in a single-quoted string.

BEGIN {
	for (i = 1; i < 256; i++) {
		c = sprintf("%c", i)
		ORD[c] = i
		if (i < 32) ESC[c] = sprintf("\\u%04x", i)
	}
	ESC["\""] = "\\\""
	ESC["\\"] = "\\\\"
	ESC["\n"] = "\\n"
	ESC["\r"] = "\\r"
	ESC["\t"] = "\\t"
	CTL = "[" sprintf("%c", 1) "-" sprintf("%c", 31) "]"
	SPECIAL = "[\"\\\\" sprintf("%c", 1) "-" sprintf("%c", 31) "]"
	HIGH = "[" sprintf("%c", 128) "-" sprintf("%c", 255) "]"
	text = ""
	full = 0
	ok = 1
	done = 0
	depth = 0
}

{
	if (!full) {
		text = (NR == 1) ? $0 : text "\n" $0
		if (length(text) > limit + 4) full = 1
	}
	if (mode == "stdout" && ok)
		scan($0)
}

END {
	t = trim(text)
	if (mode == "exit2")
		exit2(t)
	else if (ok && done && depth == 0)
		answer()
	else
		plain(t)
}

# --- A JSON reader: checks the grammar and keeps the top-level values and
# those of the object hookSpecificOutput, as raw tokens ("{" and "[" for a
# container). Strings cannot span lines in JSON, so it reads line by line.

function scan(line,    i, n, c, rest, tok) {
	n = length(line)
	i = 1
	while (i <= n && ok) {
		c = substr(line, i, 1)
		if (c == " " || c == "\t" || c == "\r") {
			i++
		} else if (c == "\"") {
			rest = substr(line, i)
			if (!match(rest, /^"([^"\\]|\\.)*"/)) {
				ok = 0
				return
			}
			tok = substr(rest, 1, RLENGTH)
			i += RLENGTH
			if (tok ~ CTL || !escapes(tok)) {
				ok = 0
				return
			}
			str(tok)
		} else if (c == "{" || c == "[") {
			opening(c)
			i++
		} else if (c == "}" || c == "]") {
			closing(c)
			i++
		} else if (c == ":") {
			if (depth == 0 || want[depth] != "colon")
				ok = 0
			want[depth] = "value"
			i++
		} else if (c == ",") {
			if (depth == 0 || want[depth] != "next")
				ok = 0
			want[depth] = (type[depth] == "o") ? "key" : "value"
			i++
		} else {
			rest = substr(line, i)
			if (!match(rest, /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/) && !match(rest, /^(true|false|null)/)) {
				ok = 0
				return
			}
			tok = substr(rest, 1, RLENGTH)
			i += RLENGTH
			scalar(tok)
		}
	}
}

# escapes reports whether every escape of a string token is one JSON has.
function escapes(t) {
	gsub(/\\(["\\\/bfnrt]|u[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F])/, "", t)
	return index(t, "\\") == 0
}

# valueHere reports whether a value may start at this point.
function valueHere() {
	if (depth == 0)
		return !done
	return want[depth] == "value" || want[depth] == "first"
}

function opening(c) {
	if (!valueHere()) {
		ok = 0
		return
	}
	keep(c)
	depth++
	type[depth] = (c == "{") ? "o" : "a"
	want[depth] = (c == "{") ? "firstkey" : "first"
	if (depth == 1 && c != "{")
		ok = 0
}

function closing(c) {
	if (depth == 0 || (c == "}") != (type[depth] == "o")) {
		ok = 0
		return
	}
	if (want[depth] != "next" && want[depth] != "firstkey" && want[depth] != "first") {
		ok = 0
		return
	}
	depth--
	after()
}

function str(t) {
	if (depth > 0 && type[depth] == "o" && (want[depth] == "key" || want[depth] == "firstkey")) {
		key[depth] = t
		want[depth] = "colon"
		return
	}
	scalar(t)
}

function scalar(t) {
	if (depth == 0 || !valueHere()) {
		ok = 0
		return
	}
	keep(t)
	after()
}

function after() {
	if (depth == 0)
		done = 1
	else
		want[depth] = "next"
}

# keep records a value of the top-level object or of hookSpecificOutput.
function keep(v) {
	if (depth == 1)
		TOP[key[1]] = v
	else if (depth == 2 && key[1] == "\"hookSpecificOutput\"" && type[2] == "o")
		HSO[key[2]] = v
}

# --- What each answer becomes.

function exit2(t) {
	if (effect == "gate")
		emit("deny", "reason", t != "" ? textval(t) : textval("Claude Code hook " event " blocked this (exit status 2)."))
	else if (effect == "continue_workflow")
		emit("continue_workflow", "reason", t != "" ? textval(t) : textval("Claude Code hook " event " asked to continue (exit status 2)."))
	else if (effect == "add_context" && event == "SessionStart")
		fail("Claude Code hook " event " exited with status 2, which shows its stderr to the user only:\n" t)
	else if (effect == "add_context" && t == "")
		emit("abstain")
	else if (effect == "add_context")
		emit("add_context", "context", textval(t))
	else if (effect == "observe" && t == "")
		emit("observe")
	else if (effect == "observe")
		fail("Claude Code hook " event " exited with status 2:\n" t)
	else
		fail("exit status 2 of Claude Code hook " event " has no portable result under effect " effect)
}

function plain(t) {
	if (t != "" && (event == "SessionStart" || event == "UserPromptSubmit")) {
		if (effect == "add_context") {
			emit("add_context", "context", textval(t))
			return
		}
		note("its text output, context for the model on " event ", cannot reach the model under effect " effect)
	}
	emit(effect == "observe" ? "observe" : "abstain")
}

function answer(    cont, dec, pd, why) {
	cont = TOP["\"continue\""]
	dec = TOP["\"decision\""]
	pd = HSO["\"permissionDecision\""]
	if (dec == "null")
		dec = ""
	if (pd == "null")
		pd = ""
	if (effect == "gate") {
		if (cont == "false")
			deny(pick(TOP["\"stopReason\""], TOP["\"reason\""], TOP["\"systemMessage\""]), "Claude Code hook " event " stopped Claude Code (continue: false).")
		else if (pd == "\"deny\"")
			deny(pick(HSO["\"permissionDecisionReason\""], TOP["\"reason\""], TOP["\"systemMessage\""]), "Claude Code hook " event " denied this.")
		else if (pd == "\"ask\"")
			deny(join("Claude Code hook " event " asks the user to confirm this, which a portable gate cannot ask: denied.", pick(HSO["\"permissionDecisionReason\""], TOP["\"reason\""], TOP["\"systemMessage\""])), "")
		else if (dec == "\"block\"" || dec == "\"deny\"")
			deny(pick(TOP["\"reason\""], TOP["\"systemMessage\""], ""), "Claude Code hook " event " blocked this.")
		else if ((dec != "" && dec != "\"approve\"" && dec != "\"allow\"") || (pd != "" && pd != "\"allow\""))
			deny("", "Claude Code hook " event " answered a decision dalo cannot map (decision " (dec == "" ? "none" : dec) ", permissionDecision " (pd == "" ? "none" : pd) "): denied.")
		else if ("\"updatedInput\"" in HSO)
			deny("", "Claude Code hook " event " rewrote the tool input, which a portable gate cannot: denied, so that the input it meant to change does not run.")
		else {
			emit(pd == "\"allow\"" || dec == "\"approve\"" || dec == "\"allow\"" ? "allow" : "abstain")
			if ("\"additionalContext\"" in HSO)
				note("its additionalContext cannot reach the model under effect gate")
			if ("\"systemMessage\"" in TOP)
				note("its systemMessage has no portable result")
		}
	} else if (effect == "continue_workflow") {
		if (dec == "\"block\"")
			emit("continue_workflow", "reason", rawval(pick(TOP["\"reason\""], TOP["\"systemMessage\""], ""), "Claude Code hook " event " asked Claude to continue."))
		else
			emit("abstain")
	} else if (effect == "add_context") {
		if (cont == "false")
			fail("Claude Code hook " event " answered continue: false, stopping Claude Code, which has no portable result under effect add_context")
		if (("\"updatedToolOutput\"" in HSO) || ("\"updatedMCPToolOutput\"" in HSO))
			fail("Claude Code hook " event " replaced the tool output, which effect add_context cannot")
		why = isstr(HSO["\"additionalContext\""]) ? HSO["\"additionalContext\""] : ""
		if (dec == "\"block\"" && isstr(TOP["\"reason\""]))
			why = (why == "") ? TOP["\"reason\""] : joinraw(why, TOP["\"reason\""])
		if (why == "")
			emit("abstain")
		else
			emit("add_context", "context", rawval(why, ""))
		if ("\"systemMessage\"" in TOP)
			note("its systemMessage has no portable result")
	} else if (effect == "observe") {
		emit("observe")
	} else {
		fail("effect " effect " is not one claude-hook.sh maps a Claude Code answer to")
	}
}

# deny denies with the raw reason, or the text dflt when there is none.
function deny(raw, dflt) {
	emit("deny", "reason", rawval(raw, dflt))
}

# pick returns the first nonblank string token of a, b, c, or "".
function pick(a, b, c) {
	if (isstr(a))
		return a
	if (isstr(b))
		return b
	if (isstr(c))
		return c
	return ""
}

function isstr(v,    t) {
	if (substr(v, 1, 1) != "\"")
		return 0
	t = substr(v, 2, length(v) - 2)
	gsub(/\\[nrtbf]|[ \t]/, "", t)
	return t != ""
}

# join returns the text s followed by the string token raw, as one token.
function join(s, raw) {
	if (raw == "")
		return textval(s)
	return joinraw(textval(s), raw)
}

function joinraw(a, b) {
	return substr(a, 1, length(a) - 1) "\\n" substr(b, 2)
}

# rawval returns the string token raw cut to the limit, or the text dflt.
function rawval(raw, dflt,    t, i, k, n, step) {
	if (raw == "")
		return textval(dflt)
	t = substr(raw, 2, length(raw) - 2)
	if (length(t) > limit) {
		# Its decoded text is no longer than itself: cut it to the limit,
		# but not inside an escape.
		t = substr(t, 1, limit)
		n = length(t)
		i = 1
		while ((k = index(substr(t, i), "\\")) > 0) {
			i += k - 1
			step = (substr(t, i + 1, 1) == "u") ? 6 : 2
			if (i + step - 1 > n) {
				t = substr(t, 1, i - 1)
				break
			}
			i += step
		}
	}
	return "\"" valid(whole(t)) "\""
}

# textval returns text as a JSON string token of at most limit bytes.
function textval(s,    out) {
	s = valid(whole(substr(s, 1, limit)))
	out = ""
	while (match(s, SPECIAL)) {
		out = out substr(s, 1, RSTART - 1) ESC[substr(s, RSTART, 1)]
		s = substr(s, RSTART + 1)
	}
	return "\"" out s "\""
}

# whole drops a UTF-8 sequence cut short at the end of s.
function whole(s,    k, c, need) {
	for (k = length(s); k > 0 && k > length(s) - 4; k--) {
		c = ORD[substr(s, k, 1)]
		if (c < 128)
			return s
		if (c >= 192) {
			need = (c >= 240) ? 4 : (c >= 224) ? 3 : 2
			return (k + need - 1 > length(s)) ? substr(s, 1, k - 1) : s
		}
	}
	return s
}

# valid replaces each byte of s that is not part of valid UTF-8 with "?".
function valid(s,    out, c, d, need, lo, hi, j, good) {
	if (s !~ HIGH)
		return s
	out = ""
	while (match(s, HIGH)) {
		out = out substr(s, 1, RSTART - 1)
		s = substr(s, RSTART)
		c = ORD[substr(s, 1, 1)]
		need = (c >= 194 && c <= 223) ? 2 : (c >= 224 && c <= 239) ? 3 : (c >= 240 && c <= 244) ? 4 : 0
		lo = (c == 224) ? 160 : (c == 240) ? 144 : 128
		hi = (c == 237) ? 159 : (c == 244) ? 143 : 191
		good = need > 0 && length(s) >= need
		for (j = 2; good && j <= need; j++) {
			d = ORD[substr(s, j, 1)]
			if (d < (j == 2 ? lo : 128) || d > (j == 2 ? hi : 191))
				good = 0
		}
		if (good) {
			out = out substr(s, 1, need)
			s = substr(s, need + 1)
		} else {
			out = out "?"
			s = substr(s, 2)
		}
	}
	return out s
}

function trim(s) {
	sub(/^[ \t\r\n]+/, "", s)
	sub(/[ \t\r\n]+$/, "", s)
	return s
}

function emit(kind, field, value) {
	if (field == "")
		print "{\"kind\":\"" kind "\"}"
	else
		print "{\"kind\":\"" kind "\",\"" field "\":" value "}"
}

function note(s) {
	print "claude-hook.sh: " event ": " s > "/dev/stderr"
}

function fail(s) {
	print "claude-hook.sh: " s
	exit 3
}
