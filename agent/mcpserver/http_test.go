package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequireTokenRefusesWithoutIt: a request without the token, with
// another one, with the token as another scheme or with a prefix of it
// gets 401 and never reaches the handler; with it, it does.
func TestRequireTokenRefusesWithoutIt(t *testing.T) {
	const token = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	reached := 0
	h := RequireToken(token)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	for _, c := range []struct {
		header string
		code   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer", http.StatusUnauthorized},
		{"Bearer " + strings.ToLower(token), http.StatusUnauthorized},
		{"Bearer " + token[:len(token)-1], http.StatusUnauthorized},
		{"Bearer " + token + "A", http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{"Bearer " + token, http.StatusOK},
		{"bearer " + token, http.StatusOK}, // the scheme is case-insensitive (RFC 9110)
	} {
		before := reached
		r := httptest.NewRequest("POST", HTTPPath, nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code || (reached > before) != (c.code == http.StatusOK) {
			t.Errorf("Authorization %q: %d, handler reached %v; want %d", c.header, w.Code, reached > before, c.code)
		}
	}
}
