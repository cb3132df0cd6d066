package job

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// ImportRequest reads the call that starts an import (POST
// /locations/imports, POST /awards/imports; the caller is an admin): the
// x-platform-req-nonce, dryRun and suppressEvents (both default true) and
// the CSV file in the multipart/form-data part `file` (at most
// MaxDirectUpload bytes of body), or with ?upload=url and no body, an
// import whose file the client uploads to the presigned URL of the answer.
// The parameters become the operation's metadata.
func ImportRequest(r *http.Request, tenantID, namespace, name string) (StartRequest, error) {
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		return StartRequest{}, err
	}
	dryRun, err := web.BoolParam(r, "dryRun", true)
	if err != nil {
		return StartRequest{}, err
	}
	suppress, err := web.BoolParam(r, "suppressEvents", true)
	if err != nil {
		return StartRequest{}, err
	}
	req := StartRequest{
		TenantID: tenantID, Namespace: namespace, Name: name, Nonce: nonce,
		Metadata: map[string]any{"dryRun": dryRun, "suppressEvents": suppress},
	}
	switch up := r.URL.Query().Get("upload"); up {
	case "url":
		body, err := web.ReadBody(r, 0)
		if err != nil || len(body) > 0 {
			return StartRequest{}, apierr.Invalid("file", "send no body with upload=url: upload the file to the URL in the answer")
		}
		req.Upload = true
		req.Metadata["upload"] = "url"
	case "":
		file, fileName, err := readFile(r)
		if err != nil {
			return StartRequest{}, err
		}
		req.Input = file
		req.Metadata["upload"] = "direct"
		req.Metadata["fileName"] = fileName
		req.Metadata["fileSize"] = len(file)
	default:
		return StartRequest{}, apierr.Invalid("upload", "must be url (or absent to send the file in the body)")
	}
	return req, nil
}

// StartHandler returns the handler of an import endpoint (its route
// declares Access web.Admin): it reads the request (ImportRequest) and
// starts the job; 202 with the Operation, and a repeated nonce answers the
// same operation.
func (s *Service) StartHandler(namespace, name string) http.HandlerFunc {
	return web.Serve(http.StatusAccepted, func(r *http.Request, a actor.Actor) (operation.Operation, error) {
		req, err := ImportRequest(r, a.TenantID, namespace, name)
		if err != nil {
			return operation.Operation{}, err
		}
		return s.Start(r.Context(), req)
	})
}

// FileHandler returns the handler of a results or export file endpoint
// (GET .../{fileId}; its route declares Access web.Admin): the file of a
// finished operation of namespace and name (see File).
func (s *Service) FileHandler(namespace, name string) http.HandlerFunc {
	return web.Serve(http.StatusOK, func(r *http.Request, a actor.Actor) (web.Response, error) {
		return s.File(r.Context(), a.TenantID, r.PathValue("fileId"), namespace, name)
	})
}

func readFile(r *http.Request) ([]byte, string, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, "", apierr.New(apierr.UnsupportedMedia, "the body must be multipart/form-data with the CSV file in the part named file (for files over 4 MiB use ?upload=url)")
	}
	if params["boundary"] == "" {
		return nil, "", apierr.Invalid("file", "the multipart body has no boundary")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxDirectUpload+1))
	if err != nil {
		return nil, "", apierr.Invalid("file", "the request body could not be read")
	}
	if len(body) > MaxDirectUpload {
		return nil, "", apierr.Errorf(apierr.PayloadTooLarge, "the request body is larger than %d bytes: upload larger files with ?upload=url", MaxDirectUpload)
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
