package amazonlocation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/location"
	"github.com/aws/smithy-go"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/geo"
)

// fakeLocation is a local HTTP server speaking the Amazon Location Service
// places API as the SDK sends it (REST JSON): it records each request and
// answers with the canned response of its operation.
type fakeLocation struct {
	srv *httptest.Server

	mu        sync.Mutex
	requests  []fakeRequest
	responses map[string]fakeResponse // "suggestions", "text", "place:<id>"
}

type fakeRequest struct {
	Op, Method, Index, PlaceID, Host, Auth string
	Body                                   map[string]any
}

type fakeResponse struct {
	status  int    // 200 when 0
	errType string // X-Amzn-ErrorType of an error
	body    string
}

func newFakeLocation(t *testing.T) *fakeLocation {
	f := &fakeLocation{responses: map[string]fakeResponse{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /places/v0/indexes/{index}/search/suggestions", f.handle("suggestions"))
	mux.HandleFunc("POST /places/v0/indexes/{index}/search/text", f.handle("text"))
	mux.HandleFunc("GET /places/v0/indexes/{index}/places/{placeId}", f.handle("place"))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, "not found", http.StatusNotFound)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeLocation) handle(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := fakeRequest{Op: op, Method: r.Method, Index: r.PathValue("index"), PlaceID: r.PathValue("placeId"), Host: r.Host, Auth: r.Header.Get("Authorization")}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			if err := json.Unmarshal(b, &req.Body); err != nil {
				http.Error(w, "bad JSON", http.StatusBadRequest)
				return
			}
		}
		key := op
		if op == "place" {
			key = "place:" + req.PlaceID
		}
		f.mu.Lock()
		f.requests = append(f.requests, req)
		resp, ok := f.responses[key]
		f.mu.Unlock()
		if !ok {
			resp = fakeResponse{status: http.StatusNotFound, errType: "ResourceNotFoundException", body: `{"message":"no such place"}`}
		}
		w.Header().Set("Content-Type", "application/json")
		if resp.errType != "" {
			w.Header().Set("X-Amzn-ErrorType", resp.errType)
		}
		if resp.status != 0 {
			w.WriteHeader(resp.status)
		}
		_, _ = io.WriteString(w, resp.body)
	}
}

// requestsOf returns the recorded requests of op, ordered by place id for
// the concurrent GetPlace calls.
func (f *fakeLocation) requestsOf(op string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if r.Op == op {
			out = append(out, r)
		}
	}
	if op == "place" {
		for i := 1; i < len(out); i++ {
			for j := i; j > 0 && out[j].PlaceID < out[j-1].PlaceID; j-- {
				out[j], out[j-1] = out[j-1], out[j]
			}
		}
	}
	return out
}

// geocoder returns the adapter on index "test-index" pointed at the fake,
// with static credentials and no retries.
func (f *fakeLocation) geocoder() *Location {
	cfg := aws.Config{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(f.srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
		}),
	}
	return NewLocation(cfg, "test-index", func(o *location.Options) { o.RetryMaxAttempts = 1 })
}

const (
	downingPlace = `{"Label":"10 Downing St, London, SW1A 2AA, GBR","Geometry":{"Point":[-0.1276,51.5034]},
		"AddressNumber":"10","Street":"Downing St","Municipality":"London","SubRegion":"Westminster",
		"Region":"England","PostalCode":"SW1A 2AA","Country":"GBR","Interpolated":false}`
	reichstagPlace = `{"Label":"Platz der Republik 1, 11011 Berlin, DEU","Geometry":{"Point":[13.3762,52.5186]},
		"AddressNumber":"1","Street":"Platz der Republik","Municipality":"Berlin","Region":"Berlin",
		"PostalCode":"11011","Country":"DEU","UnitType":"Floor","UnitNumber":"2"}`
	// A place id as the service makes them: base64 with / + and =.
	downingID = "AQAAAFUAx/9+a==b"
)

func TestLocationSuggest(t *testing.T) {
	downing := geo.Suggestion{
		Text:     "10 Downing St, London, SW1A 2AA, GBR",
		Address:  geo.Address{Line1: "10 Downing St", City: "London", Region: "England", PostalCode: "SW1A 2AA", Country: "GB"},
		Position: []float64{-0.1276, 51.5034},
		PlaceID:  downingID,
	}
	reichstag := geo.Suggestion{
		Text:     "Platz der Republik 1, 11011 Berlin, DEU",
		Address:  geo.Address{Line1: "Platz der Republik 1", Line2: "Floor 2", City: "Berlin", Region: "Berlin", PostalCode: "11011", Country: "DE"},
		Position: []float64{13.3762, 52.5186},
		PlaceID:  "reichstag",
	}
	tests := []struct {
		name      string
		text      string
		bias      []float64
		max       int
		responses map[string]fakeResponse
		wantBody  map[string]any // the SearchPlaceIndexForSuggestions request body
		wantIDs   []string       // the place ids fetched with GetPlace
		wantText  map[string]any // the SearchPlaceIndexForText request body, if any
		want      []geo.Suggestion
	}{
		{
			name: "suggestions resolved with GetPlace, in the service's order",
			text: " 10 Downing ", bias: []float64{-0.12, 51.5}, max: 5,
			responses: map[string]fakeResponse{
				"suggestions":        {body: `{"Summary":{"Text":"10 Downing","DataSource":"Esri"},"Results":[{"Text":"10 Downing St, London, SW1A 2AA, GBR","PlaceId":"` + downingID + `"},{"Text":"Platz der Republik 1, 11011 Berlin, DEU","PlaceId":"reichstag"}]}`},
				"place:" + downingID: {body: `{"Place":` + downingPlace + `}`},
				"place:reichstag":    {body: `{"Place":` + reichstagPlace + `}`},
			},
			wantBody: map[string]any{"IndexName": nil, "Text": "10 Downing", "MaxResults": 5.0, "BiasPosition": []any{-0.12, 51.5}},
			wantIDs:  []string{downingID, "reichstag"},
			want:     []geo.Suggestion{downing, reichstag},
		},
		{
			name: "no bias, default and capped result counts",
			text: "Downing Street", max: 40,
			responses: map[string]fakeResponse{
				"suggestions": {body: `{"Summary":{"Text":"Downing Street","DataSource":"Esri"},"Results":[]}`},
			},
			wantBody: map[string]any{"Text": "Downing Street", "MaxResults": 15.0},
			want:     []geo.Suggestion{},
		},
		{
			name: "default result count",
			text: "Downing Street",
			responses: map[string]fakeResponse{
				"suggestions": {body: `{"Summary":{"Text":"Downing Street","DataSource":"Esri"},"Results":[]}`},
			},
			wantBody: map[string]any{"Text": "Downing Street", "MaxResults": 5.0},
			want:     []geo.Suggestion{},
		},
		{
			name: "a suggestion without a place id is resolved by its text",
			text: "10 Downing", bias: []float64{-0.12, 51.5}, max: 3,
			responses: map[string]fakeResponse{
				"suggestions": {body: `{"Summary":{"Text":"10 Downing","DataSource":"Here"},"Results":[{"Text":"10 Downing St, London, SW1A 2AA, GBR"}]}`},
				"text":        {body: `{"Summary":{"Text":"x","DataSource":"Here"},"Results":[{"Place":` + downingPlace + `,"PlaceId":"` + downingID + `","Relevance":1}]}`},
			},
			wantBody: map[string]any{"Text": "10 Downing", "MaxResults": 3.0, "BiasPosition": []any{-0.12, 51.5}},
			wantText: map[string]any{"Text": "10 Downing St, London, SW1A 2AA, GBR", "MaxResults": 1.0, "BiasPosition": []any{-0.12, 51.5}},
			want:     []geo.Suggestion{downing},
		},
		{
			name: "a place that is gone or has no position is left out",
			text: "10 Downing",
			responses: map[string]fakeResponse{
				"suggestions":        {body: `{"Summary":{"Text":"10 Downing","DataSource":"Esri"},"Results":[{"Text":"gone","PlaceId":"gone"},{"Text":"nowhere","PlaceId":"nowhere"},{"Text":"10 Downing St, London, SW1A 2AA, GBR","PlaceId":"` + downingID + `"}]}`},
				"place:gone":         {status: 404, errType: "ResourceNotFoundException", body: `{"message":"Place not found"}`},
				"place:nowhere":      {body: `{"Place":{"Label":"Nowhere","Geometry":{}}}`},
				"place:" + downingID: {body: `{"Place":` + downingPlace + `}`},
			},
			wantBody: map[string]any{"Text": "10 Downing", "MaxResults": 5.0},
			wantIDs:  []string{downingID, "gone", "nowhere"},
			want:     []geo.Suggestion{downing},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLocation(t)
			f.responses = tt.responses
			got, err := f.geocoder().Suggest(context.Background(), tt.text, tt.bias, tt.max)
			if err != nil {
				t.Fatalf("Suggest: %v", err)
			}
			if got == nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Suggest =\n%+v\nwant\n%+v", got, tt.want)
			}
			reqs := f.requestsOf("suggestions")
			if len(reqs) != 1 {
				t.Fatalf("%d suggestion requests, want 1", len(reqs))
			}
			checkRequest(t, reqs[0], "POST", tt.wantBody)
			var ids []string
			for _, r := range f.requestsOf("place") {
				checkRequest(t, r, "GET", nil)
				ids = append(ids, r.PlaceID)
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Fatalf("GetPlace ids %q, want %q", ids, tt.wantIDs)
			}
			texts := f.requestsOf("text")
			if (tt.wantText == nil) != (len(texts) == 0) {
				t.Fatalf("%d text searches, want them only when a suggestion has no place id", len(texts))
			}
			if tt.wantText != nil {
				checkRequest(t, texts[0], "POST", tt.wantText)
			}
		})
	}
}

// checkRequest checks the index, the signature and, when want is not nil,
// the JSON body of a recorded request (a nil value in want means absent).
func checkRequest(t *testing.T, r fakeRequest, method string, want map[string]any) {
	t.Helper()
	if r.Method != method || r.Index != "test-index" {
		t.Fatalf("%s request on index %q, want %s on test-index", r.Method, r.Index, method)
	}
	if !strings.Contains(r.Auth, "Credential=AKIDTEST/") || !strings.Contains(r.Auth, "/eu-west-1/geo/aws4_request") {
		t.Fatalf("Authorization %q, want a SigV4 signature for geo in eu-west-1", r.Auth)
	}
	for k, v := range want {
		got, ok := r.Body[k]
		if v == nil {
			if ok {
				t.Fatalf("body has %s = %v, want it absent", k, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("body %s = %#v, want %#v (body %v)", k, got, v, r.Body)
		}
	}
	if want != nil {
		for k := range r.Body {
			if _, ok := want[k]; !ok {
				t.Fatalf("body has unexpected field %s (body %v)", k, r.Body)
			}
		}
	}
}

func TestLocationLocate(t *testing.T) {
	downing := geo.Address{Line1: "10 Downing Street", City: "London", PostalCode: "SW1A 2AA", Country: "GB"}
	tests := []struct {
		name     string
		a        geo.Address
		text     fakeResponse
		wantBody map[string]any
		want     []float64 // nil: geo.ErrNotResolved
	}{
		{
			name:     "best result's point",
			a:        downing,
			text:     fakeResponse{body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[{"Place":` + downingPlace + `,"PlaceId":"p1","Relevance":1},{"Place":` + reichstagPlace + `,"Relevance":0.2}]}`},
			wantBody: map[string]any{"Text": "10 Downing Street, London, SW1A 2AA, United Kingdom", "FilterCountries": []any{"GBR"}, "MaxResults": 1.0},
			want:     []float64{-0.1276, 51.5034},
		},
		{
			name:     "country by name, region and second line",
			a:        geo.Address{Line1: " 1600 Pennsylvania Ave NW ", Line2: "West Wing", City: "Washington", Region: "DC", PostalCode: "20500", Country: "United States of America"},
			text:     fakeResponse{body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[{"Place":{"Geometry":{"Point":[-77.0365,38.8977]},"Street":"Pennsylvania Ave NW","AddressNumber":"1600","Municipality":"Washington","Country":"USA"}}]}`},
			wantBody: map[string]any{"Text": "1600 Pennsylvania Ave NW, West Wing, Washington, DC 20500, United States", "FilterCountries": []any{"USA"}, "MaxResults": 1.0},
			want:     []float64{-77.0365, 38.8977},
		},
		{
			name:     "no result",
			a:        geo.Address{Line1: "1 Nowhere Lane", City: "Atlantis", Country: "GR"},
			text:     fakeResponse{body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[]}`},
			wantBody: map[string]any{"Text": "1 Nowhere Lane, Atlantis, Greece", "FilterCountries": []any{"GRC"}, "MaxResults": 1.0},
		},
		{
			name: "only a country-level result",
			a:    geo.Address{Line1: "1 Nowhere Lane", City: "Atlantis", Country: "GB"},
			text: fakeResponse{body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[{"Place":{"Label":"United Kingdom","Geometry":{"Point":[-2.0,54.0]},"Country":"GBR"},"Relevance":0.1}]}`},
		},
		{
			name: "a result without a point",
			a:    downing,
			text: fakeResponse{body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[{"Place":{"Label":"x","Municipality":"London","Geometry":{"Point":[]}}}]}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLocation(t)
			f.responses = map[string]fakeResponse{"text": tt.text}
			got, err := f.geocoder().Locate(context.Background(), tt.a)
			if tt.want == nil {
				if !errors.Is(err, geo.ErrNotResolved) || apierr.CodeOf(err).Status() != 422 {
					t.Fatalf("Locate = %v, %v; want geo.ErrNotResolved (422)", got, err)
				}
			} else if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Locate = %v, %v; want %v", got, err, tt.want)
			}
			reqs := f.requestsOf("text")
			if len(reqs) != 1 {
				t.Fatalf("%d text searches, want 1", len(reqs))
			}
			checkRequest(t, reqs[0], "POST", tt.wantBody)
		})
	}
}

func TestLocationServiceErrors(t *testing.T) {
	tests := []struct {
		name     string
		op       string // which call fails
		resp     fakeResponse
		wantCode string // the service's error code, seen through the wrapping
	}{
		{"suggestions: validation exception", "suggestions", fakeResponse{status: 400, errType: "ValidationException", body: `{"message":"Text too long","reason":"FieldValidationFailed","fieldList":[]}`}, "ValidationException"},
		{"suggestions: internal server error", "suggestions", fakeResponse{status: 500, errType: "InternalServerException", body: `{"message":"boom"}`}, "InternalServerException"},
		{"suggestions: throttled", "suggestions", fakeResponse{status: 429, errType: "ThrottlingException", body: `{"message":"slow down"}`}, "ThrottlingException"},
		{"suggestions: access denied", "suggestions", fakeResponse{status: 403, errType: "AccessDeniedException", body: `{"message":"no"}`}, "AccessDeniedException"},
		{"suggestions: index not found", "suggestions", fakeResponse{status: 404, errType: "ResourceNotFoundException", body: `{"message":"no index"}`}, "ResourceNotFoundException"},
		{"get place: internal server error", "place", fakeResponse{status: 500, errType: "InternalServerException", body: `{"message":"boom"}`}, "InternalServerException"},
		{"locate: validation exception", "text", fakeResponse{status: 400, errType: "ValidationException", body: `{"message":"bad"}`}, "ValidationException"},
		{"locate: internal server error", "text", fakeResponse{status: 500, errType: "InternalServerException", body: `{"message":"boom"}`}, "InternalServerException"},
		{"locate: error type only in the body", "text", fakeResponse{status: 400, body: `{"__type":"ValidationException","message":"bad"}`}, "ValidationException"},
		{"locate: not JSON", "text", fakeResponse{status: 502, body: `<html>bad gateway</html>`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLocation(t)
			f.responses = map[string]fakeResponse{
				"suggestions": {body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[{"Text":"t","PlaceId":"p1"}]}`},
				"place:p1":    {body: `{"Place":` + downingPlace + `}`},
				tt.op:         tt.resp,
			}
			if tt.op == "place" {
				f.responses["place:p1"] = tt.resp
			}
			g := f.geocoder()
			var err error
			if tt.op == "text" {
				_, err = g.Locate(context.Background(), geo.Address{Line1: "10 Downing Street", City: "London", Country: "GB"})
			} else {
				_, err = g.Suggest(context.Background(), "10 Downing", nil, 0)
			}
			if err == nil {
				t.Fatal("no error, want the service's error")
			}
			if apierr.CodeOf(err) != apierr.Internal {
				t.Fatalf("error %v has code %s, want INTERNAL (a 500 that shows no detail)", err, apierr.CodeOf(err))
			}
			if !strings.Contains(err.Error(), "test-index") {
				t.Fatalf("error %q does not name the place index", err)
			}
			var api smithy.APIError
			if tt.wantCode != "" && (!errors.As(err, &api) || api.ErrorCode() != tt.wantCode) {
				t.Fatalf("error %v, want the service's %s in its chain", err, tt.wantCode)
			}
		})
	}
}

func TestLocationInvalidInputSendsNothing(t *testing.T) {
	f := newFakeLocation(t)
	g := f.geocoder()
	ctx := context.Background()
	_, err := g.Suggest(ctx, "ab", nil, 0)
	wantInvalid(t, err, "address")
	_, err = g.Suggest(ctx, "London", []float64{0, 91}, 0)
	wantInvalid(t, err, "position")
	_, err = g.Locate(ctx, geo.Address{City: "London", Country: "GB"})
	wantInvalid(t, err, "line1")
	_, err = g.Locate(ctx, geo.Address{Line1: "x", City: "London", Country: "Narnia"})
	wantInvalid(t, err, "country")
	if n := len(f.requestsOf("suggestions")) + len(f.requestsOf("text")); n != 0 {
		t.Fatalf("%d requests sent for invalid input, want none", n)
	}
}

// Without a custom endpoint the SDK sends place requests to the "places."
// host of the endpoint; NewLocation keeps a custom endpoint's host as it is
// (every test above reaches the fake on 127.0.0.1 that way).
func TestLocationHostPrefix(t *testing.T) {
	f := newFakeLocation(t)
	f.responses = map[string]fakeResponse{"text": {body: `{"Summary":{"Text":"x","DataSource":"Esri"},"Results":[]}`}}
	addr := f.srv.Listener.Addr().String()
	dial := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	client := location.NewFromConfig(aws.Config{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String("http://geo.example"),
		HTTPClient:   dial,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"}, nil
		}),
	})
	plain := &Location{Client: client, IndexName: "test-index"}
	_, err := plain.Locate(context.Background(), geo.Address{Line1: "x", City: "London", Country: "GB"})
	if !errors.Is(err, geo.ErrNotResolved) {
		t.Fatalf("Locate: %v", err)
	}
	if got := f.requestsOf("text")[0].Host; got != "places.geo.example" {
		t.Fatalf("plain SDK client sent Host %q, want places.geo.example", got)
	}
	if _, err := f.geocoder().Locate(context.Background(), geo.Address{Line1: "x", City: "London", Country: "GB"}); !errors.Is(err, geo.ErrNotResolved) {
		t.Fatalf("Locate: %v", err)
	}
	if got, want := f.requestsOf("text")[1].Host, addr; got != want {
		t.Fatalf("NewLocation sent Host %q, want the custom endpoint's %q", got, want)
	}
}

func TestFromEnv(t *testing.T) {
	cfg := aws.Config{Region: "eu-west-1"}
	tests := []struct {
		name, geocoder, index string
		check                 func(t *testing.T, g geo.Geocoder)
	}{
		{"unset gives the gazetteer", "", "", func(t *testing.T, g geo.Geocoder) {
			if g != geo.Offline() {
				t.Fatalf("got %T, want the gazetteer (parsed on first use)", g)
			}
		}},
		{"offline gives the gazetteer", "offline", "idx", func(t *testing.T, g geo.Geocoder) {
			if g != geo.Offline() {
				t.Fatalf("got %T, want the gazetteer (parsed on first use)", g)
			}
		}},
		{"aws gives the Location adapter on the index", "aws", "platform-places", func(t *testing.T, g geo.Geocoder) {
			l, ok := g.(*Location)
			if !ok || l.IndexName != "platform-places" || l.Client == nil {
				t.Fatalf("got %#v, want *Location on platform-places", g)
			}
		}},
		{"aws without an index fails every call as internal", "AWS", "", func(t *testing.T, g geo.Geocoder) {
			_, err := g.Locate(context.Background(), geo.Address{Line1: "x", City: "London", Country: "GB"})
			if err == nil || apierr.CodeOf(err) != apierr.Internal || !strings.Contains(err.Error(), "PLACE_INDEX_NAME") {
				t.Fatalf("Locate error = %v, want an internal error naming PLACE_INDEX_NAME", err)
			}
			_, err = g.Suggest(context.Background(), "London", nil, 0)
			if apierr.CodeOf(err) != apierr.Internal {
				t.Fatalf("Suggest error = %v, want internal", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GEOCODER", tt.geocoder)
			t.Setenv("PLACE_INDEX_NAME", tt.index)
			tt.check(t, FromEnv(cfg))
		})
	}
}

func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.ValidationFailed || e.Field != field {
		t.Fatalf("error = %v, want VALIDATION_FAILED naming field %q", err, field)
	}
}
