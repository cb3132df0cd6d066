package apidoc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

// BenchmarkOpenAPIDocument measures what GET /openapi.json costs: the
// merge of the YAML files, which the first request of a function instance
// pays, and each request after it.
func BenchmarkOpenAPIDocument(b *testing.B) {
	b.Run("FirstRequestMerge", func(b *testing.B) {
		for b.Loop() {
			if _, err := openapi.Document(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Request", func(b *testing.B) {
		s := &apidoc.Service{}
		h := s.Routes()[0].Handler
		for b.Loop() {
			w := httptest.NewRecorder()
			h(w, httptest.NewRequest(http.MethodGet, "http://localhost:3000/openapi.json", nil))
			if w.Code != 200 {
				b.Fatalf("status %d", w.Code)
			}
			b.SetBytes(int64(w.Body.Len()))
		}
	})
}
