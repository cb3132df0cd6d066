package directory

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/geo"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// suggestBody is the body of POST /addresses/suggestions.
type suggestBody struct {
	Address  string    `json:"address"`
	Position []float64 `json:"position"`
}

// SuggestedAddress is one item of an address suggestion list: the address
// object's fields plus a display label and its coordinates.
type SuggestedAddress struct {
	Line1       string    `json:"line1"`
	Line2       string    `json:"line2,omitempty"`
	City        string    `json:"city,omitempty"`
	Region      string    `json:"region,omitempty"`
	PostalCode  string    `json:"postalCode,omitempty"`
	Country     string    `json:"country,omitempty"`
	Label       string    `json:"label"`
	Coordinates []float64 `json:"coordinates"`
}

// suggestions is the response of POST /addresses/suggestions.
type suggestions struct {
	Items []SuggestedAddress `json:"items"`
}

// handleSuggestAddresses serves POST /addresses/suggestions: places matching
// a partial address, nearest to `position` first when it is given.
func (s *Service) handleSuggestAddresses(w http.ResponseWriter, r *http.Request) {
	if err := web.CallerOf(r).RequireAuth(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in suggestBody
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	if in.Address == "" {
		web.Error(w, r, apierr.Invalid("address", "is required"))
		return
	}
	if err := geo.ValidateText("address", in.Address); err != nil {
		web.Error(w, r, err)
		return
	}
	if in.Position != nil {
		if err := geo.ValidatePosition("position", in.Position); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	found, err := s.geocoder.Suggest(r.Context(), in.Address, in.Position, 0)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := suggestions{Items: make([]SuggestedAddress, 0, len(found))}
	for _, f := range found {
		a := f.Address
		out.Items = append(out.Items, SuggestedAddress{
			Line1: a.Line1, Line2: a.Line2, City: a.City, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country,
			Label: f.Text, Coordinates: f.Position,
		})
	}
	web.JSON(w, http.StatusOK, out)
}

// coordinatesBody is the body of POST /addresses/coordinates.
type coordinatesBody struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// position is the response of POST /addresses/coordinates.
type position struct {
	Position []float64 `json:"position"`
}

// handleAddressCoordinates serves POST /addresses/coordinates: the
// [longitude, latitude] of an address (line1, city and country required);
// an address the provider cannot resolve is 422.
func (s *Service) handleAddressCoordinates(w http.ResponseWriter, r *http.Request) {
	if err := web.CallerOf(r).RequireAuth(); err != nil {
		web.Error(w, r, err)
		return
	}
	var in coordinatesBody
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	a := geo.Address{Line1: in.Line1, Line2: in.Line2, City: in.City, Region: in.Region, PostalCode: in.PostalCode, Country: in.Country}
	if err := a.ValidateLocatable(""); err != nil {
		web.Error(w, r, err)
		return
	}
	pos, err := s.geocoder.Locate(r.Context(), a.Normalized())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, position{Position: pos})
}
