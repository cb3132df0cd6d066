package locationcsv_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

const header = "title,geo_longitude,geo_latitude"

func TestImportCreatesAndUpdates(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	existing := h.Do("POST", "/locations", map[string]any{"title": "Soho", "geo": []float64{-0.13, 51.51}, "tags": []string{"old"}}, h.Admin()).Expect(t, 201, "").Map(t)
	byID := h.Do("POST", "/locations", map[string]any{"title": "Camden", "geo": []float64{-0.14, 51.54}}, h.Admin()).Expect(t, 201, "").Map(t)

	file := csvOf(
		[]string{"_id", "title", "geo_longitude", "geo_latitude", "state", "tags", "address.line1", "address.city", "contacts.email", "services.checkins", "openingHours.monday", "zones.0.name", "zones.0.tables", "links.deliveroo.enabled", "links.deliveroo.parameters", "buttons_json", "extended_json"},
		[]string{"", "Shoreditch", "-0.08", "51.52", "PENDING", "new|late", "1 Old St", "London", "shoreditch@example.com", "true", "08:00-22:00", "Terrace", "T1|T2", "true", "id=7", `[{"title":"Order","style":"PRIMARY","action":"PREORDER"}]`, `{"fid":12}`},
		[]string{"", "soho ", "-0.131", "51.511", "", "updated", "", "", "", "", "", "", "", "", "", "", ""},
		[]string{byID["_id"].(string), "Camden Town", "-0.142", "51.541", "RETIRED", "", "", "", "", "", "", "", "", "", "", "", ""},
	)
	op := importFile(h, "dryRun=false", file)
	if op["status"] != "DONE" || counts(op) != [4]int{3, 3, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	if op["namespace"] != "locations" || op["name"] != "import" || op["entityId"] != h.Tenant.ID || op["endedAt"] == nil || op["error"] != nil {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	if got := strings.Join(recs[0], ","); !strings.HasSuffix(got, ",locationId,action,error") || !strings.HasPrefix(got, "_id,title,") {
		t.Fatalf("results header = %q", got)
	}
	if got := column(t, recs, "action"); strings.Join(got, ",") != "created,updated,updated" {
		t.Fatalf("actions = %v", got)
	}
	ids := column(t, recs, "locationId")
	if ids[1] != existing["_id"] || ids[2] != byID["_id"] || ids[0] == "" {
		t.Fatalf("locationIds = %v", ids)
	}

	created := h.Do("GET", "/locations/"+ids[0], nil, h.Admin()).Expect(t, 200, "").Map(t)
	want := map[string]any{
		"title": "Shoreditch", "state": "PENDING",
	}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("created %s = %v, want %v", k, created[k], v)
		}
	}
	if g := created["geo"].([]any); g[0] != -0.08 || g[1] != 51.52 {
		t.Errorf("geo = %v", g)
	}
	if a := created["address"].(map[string]any); a["line1"] != "1 Old St" || a["city"] != "London" {
		t.Errorf("address = %v", a)
	}
	if z := created["zones"].(map[string]any)["Terrace"].(map[string]any); z["name"] != "Terrace" || len(z["tables"].([]any)) != 2 {
		t.Errorf("zones = %v", created["zones"])
	}
	if l := created["links"].(map[string]any)["deliveroo"].(map[string]any); l["enabled"] != true || l["parameters"] != "id=7" {
		t.Errorf("links = %v", created["links"])
	}
	if b := created["buttons"].([]any)[0].(map[string]any); b["style"] != "PRIMARY" {
		t.Errorf("buttons = %v", created["buttons"])
	}
	if created["extended"].(map[string]any)["fid"] != float64(12) {
		t.Errorf("extended = %v", created["extended"])
	}
	if created["services"].(map[string]any)["checkins"] != true || created["openingHours"].(map[string]any)["monday"] != "08:00-22:00" {
		t.Errorf("services/openingHours = %v %v", created["services"], created["openingHours"])
	}

	soho := h.Do("GET", "/locations/"+ids[1], nil, h.Admin()).Expect(t, 200, "").Map(t)
	if soho["title"] != "soho" || soho["tags"].([]any)[0] != "updated" || soho["state"] != "ACTIVE" {
		t.Errorf("soho = %v", soho)
	}
	camden := h.Do("GET", "/locations/"+ids[2], nil, h.Admin()).Expect(t, 200, "").Map(t)
	if camden["title"] != "Camden Town" || camden["state"] != "RETIRED" {
		t.Errorf("camden = %v", camden)
	}
}

func TestImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Do("POST", "/locations", map[string]any{"title": "Soho", "geo": []float64{-0.13, 51.51}}, h.Admin()).Expect(t, 201, "")
	for _, query := range []string{"", "dryRun=true"} {
		t.Run("query="+query, func(t *testing.T) {
			op := importFile(h, query, csvOf([]string{"title", "geo_longitude", "geo_latitude"}, []string{"New place", "1", "2"}, []string{"Soho", "3", "4"}, []string{"", "1", "2"}))
			if counts(op) != [4]int{3, 0, 2, 1} || op["metadata"].(map[string]any)["dryRun"] != true {
				t.Fatalf("operation = %v", op)
			}
			recs := results(h, op)
			if got := strings.Join(column(t, recs, "action"), ","); got != "created,updated," {
				t.Fatalf("actions = %q", got)
			}
			if ids := column(t, recs, "locationId"); ids[0] != "" || ids[1] == "" {
				t.Fatalf("locationIds = %v", ids)
			}
			list := h.Do("GET", "/locations?title=New%20place", nil, h.Admin()).Expect(t, 200, "").Map(t)
			if n := len(list["items"].([]any)); n != 0 {
				t.Fatalf("a dry run created %d locations", n)
			}
			soho := h.Do("GET", "/locations?title=Soho", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)[0].(map[string]any)
			if g := soho["geo"].([]any); g[0] != -0.13 {
				t.Fatalf("a dry run changed Soho: %v", soho)
			}
		})
	}
}

// TestImportBadRows: every bad row is reported in the results file's error
// column and never stops the good rows around it.
func TestImportBadRows(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cols := []string{"_id", "title", "geo_longitude", "geo_latitude", "state", "services.checkins", "links.ubereats.enabled", "ordering_json", "buttons_json", "extended_json", "beacons_json", "deliveryBoundaries_json", "contacts.email", "timezone", "zones.0.tables"}
	blank := func(set map[string]string) []string {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = set[c]
		}
		return row
	}
	cases := []struct {
		name string
		row  map[string]string
		want string // a substring of the error column
	}{
		{"MissingTitle", map[string]string{"geo_longitude": "1", "geo_latitude": "2"}, "title: is required"},
		{"MissingGeo", map[string]string{"title": "A"}, "geo_longitude and geo_latitude are required"},
		{"MissingLatitude", map[string]string{"title": "A", "geo_longitude": "1"}, "geo_latitude: is required"},
		{"NonNumericLongitude", map[string]string{"title": "A", "geo_longitude": "east", "geo_latitude": "2"}, "geo_longitude: must be a number"},
		{"LongitudeOutOfRange", map[string]string{"title": "A", "geo_longitude": "180.5", "geo_latitude": "2"}, "geo_longitude: must be from -180 to 180"},
		{"LatitudeOutOfRange", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "-91"}, "geo_latitude: must be from -90 to 90"},
		{"NaNGeo", map[string]string{"title": "A", "geo_longitude": "NaN", "geo_latitude": "2"}, "geo_longitude: must be a number"},
		{"BadBoolean", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "services.checkins": "maybe"}, "services.checkins: must be a boolean: true, false, yes, no, 1 or 0 (any case)"},
		{"BadLinkBoolean", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "links.ubereats.enabled": "on"}, "links.ubereats.enabled: must be a boolean: true, false, yes, no, 1 or 0 (any case)"},
		{"InvalidJSON", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "ordering_json": "{not json"}, "ordering_json: is not valid JSON"},
		{"JSONOfWrongShape", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "buttons_json": `{"title":"x"}`}, "buttons_json: must be a JSON array"},
		{"JSONUnknownField", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "beacons_json": `[{"colour":"red"}]`}, "beacons_json: does not match"},
		{"ExtendedNotObject", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "extended_json": `[1]`}, "extended_json: must be a JSON object"},
		{"BoundariesInvalid", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "deliveryBoundaries_json": `{"type":`}, "deliveryBoundaries_json: is not valid JSON"},
		{"UnknownID", map[string]string{"_id": "0123456789abcdef01234567", "title": "A", "geo_longitude": "1", "geo_latitude": "2"}, "_id: no location has this id"},
		{"BadState", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "state": "OPEN"}, "state: must be PENDING, ACTIVE or RETIRED"},
		{"BadEmail", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "contacts.email": "nobody"}, "contacts.email: must be an e-mail address"},
		{"BadTimezone", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "timezone": "Mars/Olympus"}, "timezone: must be an IANA time zone name"},
		{"ZoneWithoutName", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "zones.0.tables": "T1"}, "zones.0.name: is required"},
		{"SeveralProblems", map[string]string{"geo_longitude": "x", "geo_latitude": "y", "services.checkins": "?"}, "geo_longitude: must be a number|geo_latitude: must be a number|services.checkins: must be a boolean: true, false, yes, no, 1 or 0 (any case)|title: is required"},
		{"StateWithOtherProblems", map[string]string{"title": "A", "geo_longitude": "1", "geo_latitude": "2", "state": "FOO", "services.checkins": "maybe", "contacts.email": "nobody"}, "services.checkins: must be a boolean: true, false, yes, no, 1 or 0 (any case)|state: must be PENDING, ACTIVE or RETIRED|contacts.email: must be an e-mail address"},
	}
	recs := [][]string{cols, blank(map[string]string{"title": "Good first", "geo_longitude": "1", "geo_latitude": "2"})}
	for _, c := range cases {
		recs = append(recs, blank(c.row))
	}
	recs = append(recs, blank(map[string]string{"title": "Good last", "geo_longitude": "1", "geo_latitude": "2"}))
	file := csvOf(recs...)
	// A row with too few fields and a row with a bare quote (not CSV), then
	// a good row after them.
	file += "Short,row\n"
	file += `,Bad "quote,1,2,,,,,,,,,,,` + "\n"
	file += ",Good after,1,2,,,,,,,,,,,\n"
	op := importFile(h, "dryRun=false", file)
	n := len(cases) + 5
	if op["status"] != "DONE" || counts(op) != [4]int{n, 3, 0, len(cases) + 2} {
		t.Fatalf("operation = %v", op)
	}
	res := results(h, op)
	errs, actions := column(t, res, "error"), column(t, res, "action")
	if len(errs) != n {
		t.Fatalf("results rows = %d, want %d", len(errs), n)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := errs[i+1]; !strings.Contains(got, c.want) || actions[i+1] != "" {
				t.Fatalf("error = %q (action %q), want it to contain %q", got, actions[i+1], c.want)
			}
		})
	}
	t.Run("ShortRow", func(t *testing.T) {
		if got := errs[len(cases)+2]; !strings.Contains(got, "the row has 2 fields; the header has 15") {
			t.Fatalf("error = %q", got)
		}
	})
	t.Run("BareQuote", func(t *testing.T) {
		if got := errs[len(cases)+3]; !strings.Contains(got, "CSV error on line") {
			t.Fatalf("error = %q", got)
		}
	})
	t.Run("GoodRowsImported", func(t *testing.T) {
		for _, i := range []int{0, len(cases) + 1, len(cases) + 4} {
			if actions[i] != "created" || errs[i] != "" {
				t.Errorf("row %d: action %q error %q", i+1, actions[i], errs[i])
			}
		}
		list := h.Do("GET", "/locations?limit=100", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got := len(list["items"].([]any)); got != 3 {
			t.Errorf("locations = %d, want 3", got)
		}
	})
}

// TestImportBadFiles: a file that cannot be read FAILS the operation with
// error {code, message}.
func TestImportBadFiles(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cases := []struct {
		name, file, want string
	}{
		{"Empty", "", "file: the file is empty"},
		{"OnlyBOM", "\xef\xbb\xbf", "file: the file is empty"},
		{"WrongHeader", "name,lat,lng\nA,1,2\n", `unknown columns "name", "lat", "lng"`},
		{"MissingRequiredColumns", "title,description\nA,b\n", "the header lacks the required columns geo_longitude, geo_latitude"},
		{"MissingTitleColumn", "geo_longitude,geo_latitude\n1,2\n", "the header lacks the required columns title"},
		{"DuplicateColumn", "title,title,geo_longitude,geo_latitude\nA,A,1,2\n", `names column "title" twice`},
		{"EmptyColumnName", "title,,geo_longitude,geo_latitude\nA,,1,2\n", "empty column name"},
		{"UnknownDotColumn", "title,geo_longitude,geo_latitude,address.street\nA,1,2,x\n", `unknown columns "address.street"`},
		{"ZoneIndexTooLarge", "title,geo_longitude,geo_latitude,zones.100.name\nA,1,2,x\n", `unknown columns "zones.100.name"`},
		{"NotCSV", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "not a CSV text file"},
		{"JSONInsteadOfCSV", `{"title":"A","geo":[1,2]}`, "the header row is not valid CSV"},
		{"TextInsteadOfCSV", "Dear team, here are the locations.\nSoho\n", `unknown columns "Dear team"`},
		{"HeaderNotCSV", "\"title,geo_longitude\n", "the header row is not valid CSV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := importFile(h, "dryRun=false", c.file)
			e, _ := op["error"].(map[string]any)
			if op["status"] != "FAILED" || e["code"] != "VALIDATION_FAILED" || !strings.Contains(e["message"].(string), c.want) {
				t.Fatalf("operation = %v, want FAILED with %q", op, c.want)
			}
			if op["endedAt"] == nil || op["isRetryable"] != false {
				t.Fatalf("operation = %v", op)
			}
			// No results file for a failed import.
			h.Do("GET", "/locations/imports/"+op["_id"].(string), nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		})
	}
	t.Run("HeaderOnly", func(t *testing.T) {
		op := importFile(h, "dryRun=false", header+"\n")
		if op["status"] != "DONE" || counts(op) != [4]int{0, 0, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		if recs := results(h, op); len(recs) != 1 || strings.Join(recs[0], ",") != header+",locationId,action,error" {
			t.Fatalf("results = %v", recs)
		}
	})
	list := h.Do("GET", "/locations", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if n := len(list["items"].([]any)); n != 0 {
		t.Fatalf("bad files created %d locations", n)
	}
}

// TestImportQuotingAndBOM: quoted fields with commas, quotes and line
// breaks, a UTF-8 byte order mark, CRLF line ends and non-ASCII text.
func TestImportQuotingAndBOM(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	file := "\xef\xbb\xbftitle,geo_longitude,geo_latitude,description,tags\r\n" +
		"\"Café, \"\"Le Nord\"\"\",2.35,48.85,\"Line one,\r\nline two\",\"a|b\\|c\"\r\n" +
		"Plain,1,2,,\r\n"
	op := importFile(h, "dryRun=false", file)
	if op["status"] != "DONE" || counts(op) != [4]int{2, 2, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	if recs[0][0] != "title" {
		t.Fatalf("the BOM leaked into the header: %q", recs[0][0])
	}
	ids := column(t, recs, "locationId")
	l := h.Do("GET", "/locations/"+ids[0], nil, h.Admin()).Expect(t, 200, "").Map(t)
	// encoding/csv reads a quoted CRLF as a line feed.
	if l["title"] != `Café, "Le Nord"` || l["description"] != "Line one,\nline two" {
		t.Fatalf("location = %v", l)
	}
	if tags := l["tags"].([]any); len(tags) != 2 || tags[0] != "a" || tags[1] != "b|c" {
		t.Fatalf("tags = %v", tags)
	}
	// The results file repeats the input cells as they were.
	if got := column(t, recs, "description")[0]; got != "Line one,\nline two" {
		t.Fatalf("results description = %q", got)
	}
}

// TestImportEvents: with suppressEvents=false every written row records an
// action in its transaction; with the default (true), none.
func TestImportEvents(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	loud := importFile(h, "dryRun=false&suppressEvents=false", header+"\nLoud,1,2\nLoud two,3,4\nLoud three,5,6\n")
	quiet := importFile(h, "dryRun=false", header+"\nQuiet,1,2\n")
	update := importFile(h, "dryRun=false&suppressEvents=false", header+",tags\nLoud,1,2,x\n")
	unchanged := importFile(h, "dryRun=false&suppressEvents=false", header+",tags\nLoud,1,2,x\n")
	loudID := column(t, results(h, loud), "locationId")[0]
	quietID := column(t, results(h, quiet), "locationId")[0]
	if counts(update) != [4]int{1, 1, 0, 0} || counts(unchanged) != [4]int{1, 0, 1, 0} {
		t.Fatalf("update %v, unchanged %v", update, unchanged)
	}
	acts, err := h.Deps.Actions.ByLocation(ctx, h.Tenant.ID, loudID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, a := range acts {
		types = append(types, a.Type)
		if a.Metadata["source"] != "IMPORT" || a.Context.Location == nil || a.Context.Location.Title != "Loud" || a.Context.Tenant.Title == "" {
			t.Errorf("action = %+v", a)
		}
	}
	sort.Strings(types)
	if strings.Join(types, ",") != "LOCATION_CREATED,LOCATION_UPDATED" {
		t.Fatalf("actions of Loud = %v", types)
	}
	if acts, _ := h.Deps.Actions.ByLocation(ctx, h.Tenant.ID, quietID, 10); len(acts) != 0 {
		t.Fatalf("suppressed import recorded %d actions", len(acts))
	}
}

// TestImportInvalidUTF8Row: a row that is not UTF-8 text is a row error.
func TestImportInvalidUTF8Row(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	op := importFile(h, "dryRun=false", header+"\nBad \xff\xfe,1,2\nGood,1,2\n")
	if counts(op) != [4]int{2, 1, 0, 1} {
		t.Fatalf("operation = %v", op)
	}
	if errs := column(t, results(h, op), "error"); !strings.Contains(errs[0], "not valid UTF-8") || errs[1] != "" {
		t.Fatalf("errors = %q", errs)
	}
}

// TestLargeResultsRedirect: a results file over the inline limit is a 303
// to a presigned S3 URL that serves it.
func TestLargeResultsRedirect(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	op := importFile(h, "", header+"\nA,1,2\nB,3,4\n")
	h.Deps.Jobs.InlineLimit = 10
	href := op["result"].(map[string]any)["href"].(string)
	// h.Do follows redirects (the default client does); look at the 303
	// itself with a client that does not.
	req, _ := http.NewRequest("GET", h.Server.URL+href, nil)
	for i, hs := 0, h.Admin(); i+1 < len(hs); i += 2 {
		req.Header.Set(hs[i], hs[i+1])
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || !strings.Contains(loc, "X-Amz-Signature=") || len(b) != 0 {
		t.Fatalf("status %d, Location %q, body %q", resp.StatusCode, loc, b)
	}
	// Following it serves the file (h.Do follows it as browsers do).
	if r := h.Do("GET", href, nil, h.Admin()).Expect(t, 200, ""); !strings.HasPrefix(string(r.Body), header+",locationId,action,error\n") {
		t.Fatalf("followed = %q", r.Body)
	}
	got, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	body, _ := io.ReadAll(got.Body)
	if got.StatusCode != 200 || !strings.HasPrefix(string(body), header+",locationId,action,error\n") {
		t.Fatalf("presigned GET = %d %q", got.StatusCode, body)
	}
}

// TestImportRowsAfterAPartialCommit: a group of rows is prepared together,
// and the batch may commit partway through it (60 creates fill a
// transaction); a later row of the group that names a location an earlier
// row created or renamed updates that location instead of creating
// another.
func TestImportRowsAfterAPartialCommit(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cases := []struct {
		name string
		// existing is the title of a location created first ("" none).
		existing string
		// first is the first row's title (with existing: renames it),
		// last the 61st row's title.
		first, last string
	}{
		{name: "RepeatedTitle", first: "Repeated", last: "Repeated"},
		{name: "RepeatedTitleOtherCase", first: "Other Case", last: "oTHER cASE"},
		{name: "RenamedToLaterTitle", existing: "Before rename", first: "After rename", last: "After rename"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			suffix := title("")
			first, last := c.first+suffix, c.last+suffix
			id := ""
			if c.existing != "" {
				id = h.Do("POST", "/locations", map[string]any{"title": c.existing + suffix, "geo": []float64{1, 2}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			}
			recs := [][]string{{"_id", "title", "geo_longitude", "geo_latitude", "tags"}, {id, first, "1", "2", "first"}}
			for i := 2; i <= 60; i++ {
				recs = append(recs, []string{"", fmt.Sprintf("Filler %d%s", i, suffix), "1", "2", ""})
			}
			recs = append(recs, []string{"", last, "3", "4", "last"})
			op := importFile(h, "dryRun=false", csvOf(recs...))
			if op["status"] != "DONE" || counts(op)[3] != 0 {
				t.Fatalf("operation = %v", op)
			}
			res := results(h, op)
			ids, actions := column(t, res, "locationId"), column(t, res, "action")
			if ids[60] != ids[0] || actions[60] != "updated" {
				t.Fatalf("row 61: %s %s, want updated %s", actions[60], ids[60], ids[0])
			}
			list := h.Do("GET", "/locations?title="+url.QueryEscape(first), nil, h.Admin()).Expect(t, 200, "").Map(t)
			items := list["items"].([]any)
			if len(items) != 1 {
				t.Fatalf("%d locations titled %q", len(items), first)
			}
			l := h.Do("GET", "/locations/"+ids[0], nil, h.Admin()).Expect(t, 200, "").Map(t)
			if l["title"] != last || l["tags"].([]any)[0] != "last" {
				t.Fatalf("location = %v", l)
			}
		})
	}
}
