package symbolize

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// symbolServer serves the gperftools symbol protocol from a real binary's
// symbols, resolved by Local (as StarRocks' BE resolves its own).
func symbolServer(t *testing.T, binary string) http.HandlerFunc {
	cache := NewCache()
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			fmt.Fprintln(w, "num_symbols: 1")
			return
		}
		body, _ := io.ReadAll(req.Body)
		p := &profile.Profile{}
		for _, a := range strings.Split(string(body), "+") {
			pc, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
			if err != nil {
				http.Error(w, "bad address", http.StatusBadRequest)
				return
			}
			p.Location = append(p.Location, &profile.Location{ID: uint64(len(p.Location) + 1), Address: pc})
		}
		if err := (&Local{Binary: binary, Cache: cache}).Symbolize(req.Context(), p); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for _, loc := range p.Location {
			var names []string
			for i := len(loc.Line) - 1; i >= 0; i-- {
				names = append(names, loc.Line[i].Function.Name)
			}
			fmt.Fprintf(w, "%#x\t%s\n", loc.Address, strings.Join(names, "--"))
		}
	}
}

func TestRemote(t *testing.T) {
	fx := getFixtures(t)[2] // non-PIE: runtime PCs are link-time addresses
	pcs := samplePCs(t, fx.binary, false, 300)
	newProfile := func() *profile.Profile {
		p := &profile.Profile{}
		for i, pc := range pcs {
			p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Address: pc})
		}
		return p
	}
	want := newProfile()
	if err := (&Local{Binary: fx.binary}).Symbolize(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	good := httptest.NewServer(symbolServer(t, fx.binary))
	defer good.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no symbols here", http.StatusNotFound)
	}))
	defer broken.Close()

	tests := []struct {
		name     string
		remote   Remote
		timeout  time.Duration
		wantErr  string
		checkOut bool
	}{
		{name: "symbols", remote: Remote{URL: good.URL}, timeout: 30 * time.Second, checkOut: true},
		{name: "size limit", remote: Remote{URL: good.URL, MaxBytes: 100}, timeout: 30 * time.Second, wantErr: "size limit"},
		{name: "timeout", remote: Remote{URL: slow.URL}, timeout: 200 * time.Millisecond, wantErr: "deadline exceeded"},
		{name: "http error", remote: Remote{URL: broken.URL}, timeout: 30 * time.Second, wantErr: "404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			got := newProfile()
			err := tc.remote.Symbolize(ctx, got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, loc := range got.Location {
				w := want.Location[i]
				if hasDashes(w) {
					continue // the protocol joins inline frames with "--"
				}
				if len(loc.Line) != len(w.Line) {
					t.Fatalf("%#x: %d frames, want %d", loc.Address, len(loc.Line), len(w.Line))
				}
				for j := range loc.Line {
					if g, e := loc.Line[j].Function.Name, w.Line[j].Function.Name; g != e {
						t.Errorf("%#x frame %d: %q, want %q", loc.Address, j, g, e)
					}
				}
			}
		})
	}
}

// hasDashes reports names such as operator--, which the protocol's "--"
// separator cannot carry (jeprof splits them the same way).
func hasDashes(loc *profile.Location) bool {
	for _, l := range loc.Line {
		if strings.Contains(l.Function.Name, "--") {
			return true
		}
	}
	return false
}
