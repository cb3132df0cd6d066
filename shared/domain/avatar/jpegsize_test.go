package avatar

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

func encodeJPEG(t *testing.T, img image.Image, progressive bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	if progressive {
		// The standard encoder writes baseline frames only; mark the frame
		// progressive (SOF2) to check the header reader accepts it.
		i := bytes.Index(out, []byte{0xFF, 0xC0})
		out = append([]byte(nil), out...)
		out[i+1] = 0xC2
	}
	return out
}

func TestJPEGSize(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 7, 3))
	rgba := image.NewRGBA(image.Rect(0, 0, 40, 25))
	rgba.Set(1, 1, color.RGBA{200, 10, 10, 255})
	baseline := encodeJPEG(t, rgba, false)
	withFill := append([]byte{0xFF, 0xD8, 0xFF, 0xFF}, baseline[3:]...)
	lossless := append([]byte(nil), baseline...)
	lossless[bytes.Index(lossless, []byte{0xFF, 0xC0})+1] = 0xC3
	zeroWidth := append([]byte(nil), baseline...)
	sof := bytes.Index(zeroWidth, []byte{0xFF, 0xC0})
	zeroWidth[sof+7], zeroWidth[sof+8] = 0, 0
	// The standard encoder writes no JFIF header (APP0): such a file is
	// read up to its first scan. With the header first, the frame header
	// is enough, as for image/jpeg.
	scan := bytes.Index(baseline, []byte{0xFF, 0xDA})
	app0 := []byte{0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00}
	jfif := append(append(append([]byte{}, baseline[:2]...), app0...), baseline[2:]...)
	jfifCut := jfif[:bytes.Index(jfif, []byte{0xFF, 0xDA})]
	tests := []struct {
		name          string
		in            []byte
		width, height int
		ok            bool
	}{
		{"BaselineColour", baseline, 40, 25, true},
		{"Gray", encodeJPEG(t, gray, false), 7, 3, true},
		{"Progressive", encodeJPEG(t, rgba, true), 40, 25, true},
		{"FillBytesBeforeMarker", withFill, 40, 25, true},
		{"Empty", nil, 0, 0, false},
		{"SOIOnly", []byte{0xFF, 0xD8}, 0, 0, false},
		{"PNG", []byte("\x89PNG\r\n\x1a\nrest"), 0, 0, false},
		{"CutInFrameHeader", baseline[:sof+6], 0, 0, false},
		{"CutBeforeFrame", baseline[:sof], 0, 0, false},
		{"ScanBeforeFrame", []byte{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02}, 0, 0, false},
		{"Lossless", lossless, 0, 0, false},
		{"ZeroWidth", zeroWidth, 0, 0, false},
		{"SegmentLengthPastEnd", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x7F, 0xFF, 0x00}, 0, 0, false},
		{"NotAMarker", []byte{0xFF, 0xD8, 0x12, 0x34}, 0, 0, false},
		{"CutAfterFrameHeader", baseline[:scan], 0, 0, false},
		{"JFIF", jfif, 40, 25, true},
		{"JFIFCutAfterFrameHeader", jfifCut, 40, 25, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, ok := jpegSize(tt.in)
			if ok != tt.ok || w != tt.width || h != tt.height {
				t.Fatalf("jpegSize = %d, %d, %v; want %d, %d, %v", w, h, ok, tt.width, tt.height, tt.ok)
			}
			if !tt.ok {
				return
			}
			// Whatever the reader accepts, image/jpeg reads the same size.
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(tt.in))
			if err != nil || cfg.Width != w || cfg.Height != h {
				t.Fatalf("image/jpeg: %v, %dx%d; reader: %dx%d", err, cfg.Width, cfg.Height, w, h)
			}
		})
	}
}

// FuzzJPEGSize checks the header reader never panics and, where image/jpeg
// reads a size too, reads the same one. (image/jpeg also checks the tables'
// contents, which the reader does not.)
func FuzzJPEGSize(f *testing.F) {
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00})
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02, 0xFF, 0xD9})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, h, ok := jpegSize(b)
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
		if !ok || err != nil {
			return
		}
		if cfg.Width != w || cfg.Height != h {
			t.Fatalf("reader accepted %dx%d; image/jpeg: %v, %dx%d", w, h, err, cfg.Width, cfg.Height)
		}
	})
}
