package gitrepo

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"dalo/internal/lazyregexp"
)

// Transports are the only ways dalo lets git reach a repository: a URL of
// any other scheme is refused before git runs, and git itself is told the
// same (GIT_ALLOW_PROTOCOL), so that neither a redirect, a user's
// url.<base>.insteadOf nor a remote helper reaches another one.
var Transports = []string{"https", "ssh", "file"}

// A URL is where a git source is fetched from. Its String never holds a
// credential: what the user wrote after https:// and before the host, or
// the password of an ssh URL, is kept apart for the one fetch it came with
// and is never stored, printed or put on git's command line.
type URL struct {
	Scheme string // https, ssh or file
	clean  string // the URL without credentials: what is stored, shown and given to git
	user   string // credentials given in the URL, for one fetch
	pass   string
}

// String is the URL without its credentials.
func (u URL) String() string { return u.clean }

// HasCredentials says whether the URL as written carried credentials,
// which dalo used for that fetch only.
func (u URL) HasCredentials() bool { return u.user != "" || u.pass != "" }

// scpLike is git's other way to write an ssh URL: user@host:path. dalo
// asks for the user part, so that a directory name with a colon in it is
// never taken for a host.
var scpLike = lazyregexp.New(`^([^@/:]+)@([^/:]+):(.+)$`)

// ErrTransport is wrapped by the error that refuses a URL of a transport
// dalo does not allow.
var ErrTransport = errors.New("transport not allowed")

// ParseURL says whether s is a git URL: one with a scheme (scheme://...),
// or scp-like user@host:path, which is ssh. Anything else is not (ok is
// false): a directory. A git URL dalo does not accept is an error: a
// transport other than https, ssh and file, an empty host or path, a host
// or user that git would take for an option, control characters, a query
// or a fragment.
func ParseURL(s string) (u URL, ok bool, err error) {
	if scheme, _, found := strings.Cut(s, "://"); found && isScheme(scheme) {
		u, err := parseSchemeURL(s, strings.ToLower(scheme))
		return u, true, err
	}
	if m := scpLike.FindStringSubmatch(s); m != nil {
		user, host, path := m[1], m[2], m[3]
		if err := checkText(s); err != nil {
			return URL{}, true, err
		}
		if strings.HasPrefix(user, "-") || strings.HasPrefix(host, "-") {
			return URL{}, true, fmt.Errorf("git URL %s: a user or host that starts with '-' would be read as an ssh option", s)
		}
		return URL{Scheme: "ssh", clean: user + "@" + host + ":" + path}, true, nil
	}
	return URL{}, false, nil
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

func parseSchemeURL(s, scheme string) (URL, error) {
	allowed := false
	for _, t := range Transports {
		allowed = allowed || t == scheme
	}
	if !allowed {
		hint := ""
		if scheme == "http" {
			hint = " (use https)"
		}
		return URL{}, fmt.Errorf("git URL %s: %w: %s%s; dalo fetches git sources over %s only", redactRaw(s), ErrTransport, scheme, hint, strings.Join(Transports, ", "))
	}
	if err := checkText(s); err != nil {
		return URL{}, fmt.Errorf("git URL %s: %v", redactRaw(s), err)
	}
	p, err := url.Parse(s)
	if err != nil {
		return URL{}, fmt.Errorf("git URL %s: %v", redactRaw(s), errors.Unwrap(err))
	}
	if p.RawQuery != "" || p.Fragment != "" || p.ForceQuery || strings.Contains(s, "#") {
		return URL{}, fmt.Errorf("git URL %s: a git URL has no query or fragment", redactRaw(s))
	}
	u := URL{Scheme: scheme}
	if p.User != nil {
		u.user = p.User.Username()
		u.pass, _ = p.User.Password()
	}
	switch scheme {
	case "file":
		if p.Host != "" && p.Host != "localhost" {
			return URL{}, fmt.Errorf("git URL %s: a file URL names no host: file:///path/to/repo.git", redactRaw(s))
		}
		if p.User != nil {
			return URL{}, fmt.Errorf("git URL %s: a file URL has no user", redactRaw(s))
		}
		if !strings.HasPrefix(p.Path, "/") || p.Path == "/" {
			return URL{}, fmt.Errorf("git URL %s: want file:///absolute/path/to/repo.git", redactRaw(s))
		}
	default:
		if p.Host == "" || p.Hostname() == "" {
			return URL{}, fmt.Errorf("git URL %s: no host", redactRaw(s))
		}
		if strings.HasPrefix(p.Hostname(), "-") || strings.HasPrefix(u.user, "-") {
			return URL{}, fmt.Errorf("git URL %s: a user or host that starts with '-' would be read as an ssh option", redactRaw(s))
		}
		if p.Path == "" || p.Path == "/" {
			return URL{}, fmt.Errorf("git URL %s: no repository path", redactRaw(s))
		}
	}
	clean := *p
	clean.User = nil
	if scheme == "ssh" {
		// ssh never asks git for a password, and dalo runs it in batch
		// mode: a key logs in. The user is who logs in, not a secret.
		if u.pass != "" {
			return URL{}, fmt.Errorf("git URL %s: an ssh URL carries no password: dalo runs ssh in batch mode, so log in with a key", redactRaw(s))
		}
		if u.user != "" {
			clean.User = url.User(u.user)
		}
		u.user = ""
	}
	u.clean = clean.String()
	return u, nil
}

// checkText refuses what no URL should hold and git would mangle.
func checkText(s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' {
			return fmt.Errorf("a git URL holds no spaces or control characters")
		}
	}
	return nil
}

// redactRaw is s without what sits between "://" and the first '@' of its
// authority, for errors about a URL that did not parse: it may hold a
// password.
func redactRaw(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	auth, path, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		auth = "<credentials>@" + auth[i+1:]
	}
	if path != "" || strings.Contains(rest, "/") {
		auth += "/" + path
	}
	return scheme + "://" + auth
}

// redact removes u's credentials from text git printed.
func (u URL) redact(text string) string {
	for _, secret := range []string{u.pass, u.user} {
		if len(secret) >= 3 {
			text = strings.ReplaceAll(text, secret, "<credentials>")
		}
	}
	return text
}
