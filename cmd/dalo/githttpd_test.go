package main

import (
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdGithttpd serves the bare repositories under ROOT over https on
// loopback, through git's own http-backend run as a CGI program, as a git
// host does:
//
//	githttpd NAME ROOT [USER:PASSWORD]
//
// It sets $NAME to the server's https://127.0.0.1:PORT and $NAME_HOST to
// 127.0.0.1:PORT, and points git at the server's certificate
// (GIT_SSL_CAINFO, a setting a user of a private CA makes). With
// USER:PASSWORD every request needs those credentials (HTTP basic
// authentication). The server stops when the script ends.
func cmdGithttpd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: githttpd NAME ROOT [USER:PASSWORD]")
	}
	git, err := exec.LookPath("git")
	ts.Check(err)
	var h http.Handler = &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + ts.MkAbs(args[1]), "GIT_HTTP_EXPORT_ALL=1"},
	}
	if len(args) == 3 {
		user, pass, _ := strings.Cut(args[2], ":")
		backend := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewUnstartedServer(h)
	srv.StartTLS()
	ts.Defer(srv.Close)
	ca := ts.MkAbs(args[0] + ".pem")
	ts.Check(os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	ts.Setenv(args[0], srv.URL)
	ts.Setenv(args[0]+"_HOST", strings.TrimPrefix(srv.URL, "https://"))
	ts.Setenv("GIT_SSL_CAINFO", ca)
}
