package web_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

func TestCheckText(t *testing.T) {
	ptr := func(s string) *string { return &s }
	tests := []struct {
		name    string
		v       *string
		wantMsg string // "" when the text is accepted
	}{
		{"Absent", nil, ""},
		{"Short", ptr("Tea"), ""},
		{"AtMax", ptr("ééééé"), ""},
		{"TabAndLineBreaks", ptr("a\tb\nc"), ""},
		{"CarriageReturn", ptr("a\r\nb"), ""},
		{"Empty", ptr(""), "title: must be 1 to 5 characters"},
		{"OverMax", ptr("ééééééé"), "title: must be 1 to 5 characters"},
		{"ControlCharacter", ptr("a\x01b"), "title: must not hold control characters"},
		{"Delete", ptr("a\x7fb"), "title: must not hold control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := web.CheckText("title", tt.v, 5)
			got := ""
			if err != nil {
				e, ok := apierr.As(err)
				if !ok || e.Code != apierr.ValidationFailed || e.Field != "title" {
					t.Fatalf("CheckText error = %v, want VALIDATION_FAILED on title", err)
				}
				got = e.Message
			}
			if want := tt.wantMsg; got != want {
				t.Errorf("CheckText message = %q, want %q", got, want)
			}
		})
	}
}
