// Package amazonlocation is the geocoder on an Amazon Location Service place
// index (geo.Geocoder).
package amazonlocation

import (
	"context"
	"errors"
	"fmt"
	"github.com/loyalty-platform/platform/shared/platform/geo"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/location"
	"github.com/aws/aws-sdk-go-v2/service/location/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// LocationAPI is the part of the Amazon Location Service client the adapter
// uses; *location.Client implements it.
type LocationAPI interface {
	SearchPlaceIndexForSuggestions(ctx context.Context, in *location.SearchPlaceIndexForSuggestionsInput, optFns ...func(*location.Options)) (*location.SearchPlaceIndexForSuggestionsOutput, error)
	SearchPlaceIndexForText(ctx context.Context, in *location.SearchPlaceIndexForTextInput, optFns ...func(*location.Options)) (*location.SearchPlaceIndexForTextOutput, error)
	GetPlace(ctx context.Context, in *location.GetPlaceInput, optFns ...func(*location.Options)) (*location.GetPlaceOutput, error)
}

// Location is the Geocoder on an Amazon Location Service place index.
//
// Suggest calls SearchPlaceIndexForSuggestions (autocomplete on partial
// text), then resolves each suggestion to a full address and position with
// GetPlace (in parallel; a suggestion without a PlaceId, which some data
// providers return, is resolved with SearchPlaceIndexForText on its text).
// Locate calls SearchPlaceIndexForText with the formatted address, filtered
// to the address's country, and takes the best result; a result coarser
// than a city (no street, municipality or postal code: a region or a
// country) does not count as resolved.
type Location struct {
	Client    LocationAPI
	IndexName string
}

// FromEnv returns the geocoder the environment configures: GEOCODER=aws
// gives the Amazon Location Service adapter on the place index named by
// PLACE_INDEX_NAME (when that is unset, every call fails with an internal
// error that names the missing setting); anything else gives the offline
// gazetteer (geo.Offline). Only the users function imports this package,
// so the others link no Amazon Location client.
func FromEnv(cfg aws.Config) geo.Geocoder {
	if strings.EqualFold(os.Getenv("GEOCODER"), "aws") {
		index := os.Getenv("PLACE_INDEX_NAME")
		if index == "" {
			return geo.Unconfigured()
		}
		return NewLocation(cfg, index)
	}
	return geo.Offline()
}

// NewLocation returns the adapter for the place index named index, with a
// client built from cfg. With a custom endpoint (cfg.BaseEndpoint,
// AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_LOCATION: LocalStack or a test
// server) the "places." host prefix the SDK puts before the endpoint's
// host is left out, so the endpoint is used as given. optFns adjust the
// client (tests turn retries off).
func NewLocation(cfg aws.Config, index string, optFns ...func(*location.Options)) *Location {
	fns := append([]func(*location.Options){func(o *location.Options) {
		if o.BaseEndpoint != nil {
			o.APIOptions = append(o.APIOptions, disableHostPrefix)
		}
	}}, optFns...)
	return &Location{Client: location.NewFromConfig(cfg, fns...), IndexName: index}
}

// disableHostPrefix adds a step that tells the SDK not to put its endpoint
// host prefix ("places.") before a custom endpoint's host.
func disableHostPrefix(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("geo.DisableHostPrefix",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
		}), middleware.Before)
}

// Suggest implements Geocoder.
func (l *Location) Suggest(ctx context.Context, text string, bias []float64, max int) ([]geo.Suggestion, error) {
	if err := geo.CheckSuggest(text, bias); err != nil {
		return nil, err
	}
	in := &location.SearchPlaceIndexForSuggestionsInput{
		IndexName:  aws.String(l.IndexName),
		Text:       aws.String(strings.TrimSpace(text)),
		MaxResults: aws.Int32(int32(geo.SuggestLimit(max))),
	}
	if bias != nil {
		in.BiasPosition = clonePos(bias)
	}
	out, err := l.Client.SearchPlaceIndexForSuggestions(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("geo: search place index %s for suggestions: %w", l.IndexName, err)
	}
	// Resolve every suggestion at once; slots keep the service's order.
	slots := make([]*geo.Suggestion, len(out.Results))
	errs := make([]error, len(out.Results))
	var wg sync.WaitGroup
	for i, r := range out.Results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots[i], errs[i] = l.resolve(ctx, r, bias)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	list := make([]geo.Suggestion, 0, len(slots))
	for _, s := range slots {
		if s != nil {
			list = append(list, *s)
		}
	}
	return list, nil
}

// resolve turns a suggestion into a full place; nil when the place is
// gone or has no position.
func (l *Location) resolve(ctx context.Context, r types.SearchForSuggestionsResult, bias []float64) (*geo.Suggestion, error) {
	text := aws.ToString(r.Text)
	if id := aws.ToString(r.PlaceId); id != "" {
		out, err := l.Client.GetPlace(ctx, &location.GetPlaceInput{IndexName: aws.String(l.IndexName), PlaceId: aws.String(id)})
		var missing *types.ResourceNotFoundException
		switch {
		case errors.As(err, &missing):
			return nil, nil // the place id is no longer valid: skip it
		case err != nil:
			return nil, fmt.Errorf("geo: get place %s from index %s: %w", id, l.IndexName, err)
		}
		return suggestionOf(out.Place, id, text), nil
	}
	in := &location.SearchPlaceIndexForTextInput{IndexName: aws.String(l.IndexName), Text: aws.String(text), MaxResults: aws.Int32(1)}
	if bias != nil {
		in.BiasPosition = clonePos(bias)
	}
	out, err := l.Client.SearchPlaceIndexForText(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("geo: search place index %s for text of a suggestion: %w", l.IndexName, err)
	}
	if len(out.Results) == 0 {
		return nil, nil
	}
	return suggestionOf(out.Results[0].Place, aws.ToString(out.Results[0].PlaceId), text), nil
}

// Locate implements Geocoder.
func (l *Location) Locate(ctx context.Context, a geo.Address) ([]float64, error) {
	if err := a.ValidateLocatable(""); err != nil {
		return nil, err
	}
	c, _ := geo.LookupCountry(a.Country)
	a = a.Normalized()
	text := geo.JoinNonEmpty(", ", a.Line1, a.Line2, a.City, geo.JoinNonEmpty(" ", a.Region, a.PostalCode), c.Name)
	out, err := l.Client.SearchPlaceIndexForText(ctx, &location.SearchPlaceIndexForTextInput{
		IndexName:       aws.String(l.IndexName),
		Text:            aws.String(text),
		FilterCountries: []string{c.Alpha3},
		MaxResults:      aws.Int32(1),
	})
	if err != nil {
		return nil, fmt.Errorf("geo: search place index %s for text: %w", l.IndexName, err)
	}
	for _, r := range out.Results {
		p := r.Place
		if p == nil || p.Geometry == nil || len(p.Geometry.Point) != 2 {
			continue
		}
		if aws.ToString(p.Street) == "" && aws.ToString(p.Municipality) == "" && aws.ToString(p.PostalCode) == "" {
			continue // only a region or a country: not this address
		}
		return clonePos(p.Geometry.Point), nil
	}
	return nil, fmt.Errorf("geo: place index %s has no place for the address in %s: %w", l.IndexName, c.Alpha2, geo.ErrNotResolved)
}

// suggestionOf maps an Amazon Location place to a Suggestion; nil when the
// place has no position.
func suggestionOf(p *types.Place, id, text string) *geo.Suggestion {
	if p == nil || p.Geometry == nil || len(p.Geometry.Point) != 2 {
		return nil
	}
	a := addressOf(p)
	if text == "" {
		text = aws.ToString(p.Label)
	}
	return &geo.Suggestion{Text: text, Address: a, Position: clonePos(p.Geometry.Point), PlaceID: id}
}

// numberAfterStreet lists the countries (ISO alpha-2) whose addresses put
// the house number after the street name ("Unter den Linden 77").
var numberAfterStreet = map[string]bool{
	"AT": true, "BA": true, "BE": true, "CH": true, "CZ": true, "DE": true, "DK": true,
	"EE": true, "ES": true, "FI": true, "HR": true, "HU": true, "IS": true, "IT": true,
	"LI": true, "LT": true, "LV": true, "NL": true, "NO": true, "PL": true, "PT": true,
	"RS": true, "SE": true, "SI": true, "SK": true, "AR": true, "BR": true, "CL": true,
	"MX": true, "TR": true, "GR": true,
}

// addressOf maps the fields of an Amazon Location place to an Address:
// AddressNumber and Street make line1 (in the country's order), UnitType
// and UnitNumber line2, Municipality the city; the ISO alpha-3 country
// becomes alpha-2.
func addressOf(p *types.Place) geo.Address {
	a := geo.Address{
		City:       aws.ToString(p.Municipality),
		Region:     aws.ToString(p.Region),
		PostalCode: aws.ToString(p.PostalCode),
		Country:    aws.ToString(p.Country),
	}
	if c, ok := geo.CountryByAlpha3(strings.ToUpper(a.Country)); ok {
		a.Country = c.Alpha2
	}
	number, street := aws.ToString(p.AddressNumber), aws.ToString(p.Street)
	if numberAfterStreet[a.Country] {
		a.Line1 = geo.JoinNonEmpty(" ", street, number)
	} else {
		a.Line1 = geo.JoinNonEmpty(" ", number, street)
	}
	a.Line2 = geo.JoinNonEmpty(" ", aws.ToString(p.UnitType), aws.ToString(p.UnitNumber))
	return a
}

func clonePos(p []float64) []float64 { return []float64{p[0], p[1]} }
