package locationcsv

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/operation"
	"github.com/loyalty-platform/platform/shared/web"
)

// MaxExportLimit is the largest `limit` of an export.
const MaxExportLimit = 1000000

// Routes returns the routes this package adds to the locations function.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/locations/imports", Handler: s.handleImport},
		{Method: "GET", Path: "/locations/imports/{fileId}", Handler: s.handleImportFile},
		{Method: "POST", Path: "/locations/exports", Handler: s.handleExport},
		{Method: "GET", Path: "/locations/exports/{fileId}", Handler: s.handleExportFile},
	}
}

// handleImport serves POST /locations/imports (admin): it starts an
// import of the CSV file in the multipart/form-data part `file` (at most
// job.MaxDirectUpload bytes of body), or with ?upload=url and no body, an
// import whose file the client uploads to the presigned URL in the
// answer's `upload`. 202 with the Operation; a repeated nonce answers the
// same operation.
func (s *Service) handleImport(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	dryRun, err := web.BoolParam(r, "dryRun", true)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	suppress, err := web.BoolParam(r, "suppressEvents", true)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	req := job.StartRequest{
		TenantID: caller.TenantID, Namespace: Namespace, Name: NameImport, Nonce: nonce,
		Metadata: map[string]any{"dryRun": dryRun, "suppressEvents": suppress},
	}
	switch up := r.URL.Query().Get("upload"); up {
	case "url":
		body, err := web.ReadBody(r, 0)
		if err != nil || len(body) > 0 {
			web.Error(w, r, apierr.Invalid("file", "send no body with upload=url: upload the file to the URL in the answer"))
			return
		}
		req.Upload = true
		req.Metadata["upload"] = "url"
	case "":
		file, name, err := readFile(r)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		req.Input = file
		req.Metadata["upload"] = "direct"
		req.Metadata["fileName"] = name
		req.Metadata["fileSize"] = len(file)
	default:
		web.Error(w, r, apierr.Invalid("upload", "must be url (or absent to send the file in the body)"))
		return
	}
	op, err := s.Jobs.Start(r.Context(), req)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusAccepted, op)
}

// readFile reads the `file` part of a multipart/form-data body.
func readFile(r *http.Request) ([]byte, string, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, "", apierr.New(apierr.UnsupportedMedia, "the body must be multipart/form-data with the CSV file in the part named file (for files over 4 MiB use ?upload=url)")
	}
	if params["boundary"] == "" {
		return nil, "", apierr.Invalid("file", "the multipart body has no boundary")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, job.MaxDirectUpload+1))
	if err != nil {
		return nil, "", apierr.Invalid("file", "the request body could not be read")
	}
	if len(body) > job.MaxDirectUpload {
		return nil, "", apierr.Errorf(apierr.PayloadTooLarge, "the request body is larger than %d bytes: upload larger files with ?upload=url", job.MaxDirectUpload)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var (
		file  []byte
		name  string
		found bool
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", apierr.Invalid("file", "the multipart body is malformed")
		}
		field := part.FormName()
		if field != "file" {
			_ = part.Close()
			return nil, "", apierr.Invalid(field, "unknown form field: send only the part named file")
		}
		if found {
			return nil, "", apierr.Invalid("file", "send one file")
		}
		b, err := io.ReadAll(part)
		if err != nil {
			return nil, "", apierr.Invalid("file", "the multipart body is malformed")
		}
		file, name, found = b, part.FileName(), true
		if file == nil {
			file = []byte{}
		}
	}
	if !found {
		return nil, "", apierr.Invalid("file", "is required: the CSV file in a multipart part named file")
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return file, name, nil
}

// handleImportFile serves GET /locations/imports/{fileId} (admin): the
// results file of a finished import, as text/csv (or 303 to a presigned
// URL when it is larger than job.DefaultInlineLimit).
func (s *Service) handleImportFile(w http.ResponseWriter, r *http.Request) {
	s.serveFile(w, r, NameImport)
}

// handleExportFile serves GET /locations/exports/{fileId} (admin): the
// file of a finished export, as handleImportFile does.
func (s *Service) handleExportFile(w http.ResponseWriter, r *http.Request) {
	s.serveFile(w, r, NameExport)
}

func (s *Service) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.Jobs.Download(w, r, caller.TenantID, r.PathValue("fileId"), Namespace, name); err != nil {
		web.Error(w, r, err)
	}
}

// handleExport serves POST /locations/exports (admin): it starts an export
// of the locations matching `filters` (at most `limit`). 202 with the
// Operation; a repeated nonce answers the same operation.
func (s *Service) handleExport(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireAdmin(); err != nil {
		web.Error(w, r, err)
		return
	}
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var in ExportRequest
	if err := web.DecodeOptional(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	md, err := in.metadata()
	if err != nil {
		web.Error(w, r, err)
		return
	}
	op, err := s.Jobs.Start(r.Context(), job.StartRequest{
		TenantID: caller.TenantID, Namespace: Namespace, Name: NameExport, Nonce: nonce, Metadata: md,
	})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusAccepted, op)
}

// metadata validates an export request and returns it as the operation's
// metadata.
func (in ExportRequest) metadata() (map[string]any, error) {
	md := map[string]any{}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxExportLimit {
			return nil, apierr.Invalid("limit", "must be from 1 to %d", MaxExportLimit)
		}
		md["limit"] = *in.Limit
	}
	if in.Filters == nil {
		return md, nil
	}
	f := location.Filter{}
	var states []string
	for _, st := range strings.Split(in.Filters.State, ",") {
		// Any case, as GET /locations?state= accepts; stored upper-case.
		if st = strings.ToUpper(strings.TrimSpace(st)); st != "" {
			states = append(states, st)
		}
	}
	f.States = states
	if err := f.Validate(); err != nil {
		return nil, err
	}
	filters := map[string]any{}
	if len(states) > 0 {
		filters["state"] = strings.Join(states, ",")
	}
	for name, list := range map[string][]string{"tags": in.Filters.Tags, "regions": in.Filters.Regions} {
		if len(list) > 100 {
			return nil, apierr.Invalid("filters."+name, "at most 100 items")
		}
		var items []any
		for _, v := range list {
			v = strings.TrimSpace(v)
			if v == "" || len(v) > location.MaxListItem {
				return nil, apierr.Invalid("filters."+name, "items must be 1 to %d characters", location.MaxListItem)
			}
			items = append(items, v)
		}
		if len(items) > 0 {
			filters[name] = items
		}
	}
	md["filters"] = filters
	return md, nil
}
