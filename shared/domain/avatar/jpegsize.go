package avatar

// jpegSize reads the width and height of a JPEG image from its frame header
// (SOF marker), as image/jpeg's DecodeConfig does, without linking the
// image packages into every function that imports this one. It accepts
// the frames image/jpeg decodes (baseline SOF0, extended SOF1, progressive
// SOF2) with 1, 3 or 4 components, and refuses anything else: no start of
// image, a segment cut short, scan data before the frame header, a zero
// dimension, or a frame of another coding (lossless, arithmetic). Like
// DecodeConfig, it reads on past the frame header to the first scan unless
// a JFIF header came first, so a file cut after its frame header is
// refused too.
func jpegSize(b []byte) (width, height int, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 0, 0, false
	}
	jfif, frame := false, false
	for i := 2; ; {
		// A marker is 0xFF then a code; fill bytes (more 0xFF) may precede it.
		if i >= len(b) || b[i] != 0xFF {
			return 0, 0, false
		}
		for i < len(b) && b[i] == 0xFF {
			i++
		}
		if i >= len(b) {
			return 0, 0, false
		}
		code := b[i]
		i++
		switch {
		case code == 0x01 || (code >= 0xD0 && code <= 0xD7):
			continue // TEM and RSTn stand alone
		case code == 0xDA && frame:
			return width, height, true // the first scan, after the frame header
		case code == 0xD8 || code == 0xD9 || code == 0xDA || code == 0x00:
			return 0, 0, false // a second SOI, the end, or a scan before any frame
		}
		if i+2 > len(b) {
			return 0, 0, false
		}
		n := int(b[i])<<8 | int(b[i+1])
		if n < 2 || i+n > len(b) {
			return 0, 0, false
		}
		seg := b[i+2 : i+n]
		i += n
		switch code {
		case 0xE0:
			jfif = jfif || (!frame && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00")
		case 0xC0, 0xC1, 0xC2:
			if frame || len(seg) < 6 {
				return 0, 0, false
			}
			height, width = int(seg[1])<<8|int(seg[2]), int(seg[3])<<8|int(seg[4])
			comps := int(seg[5])
			if seg[0] != 8 || width == 0 || height == 0 || (comps != 1 && comps != 3 && comps != 4) || len(seg) < 6+3*comps {
				return 0, 0, false
			}
			if jfif {
				return width, height, true
			}
			frame = true
		case 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF:
			return 0, 0, false // lossless, hierarchical or arithmetic: not decodable
		}
	}
}
