package job

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzInputRead reads a file as a job's input does after its header: every
// record comes with the offset just after it, offsets only grow and stay
// within the file (they are the checkpoint a resumed run seeks to), a bad
// record is a *RowError the run reports and reads past, and the end is
// io.EOF within as many reads as the file has bytes.
func FuzzInputRead(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a,\"b\nc\",d\r\n", "\"x\"y,z\n", "\"open\n", "a\x00b\n\xff\xfe\n", "", "\n\n\n", "a,b\r\n\r\n1",
		"title,x\n\"=HYPERLINK(\"\"x\"\")\",@SUM(1+1)\n'=a,\"\t-b\"\n", "n\n1e308\n1e126\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &Input{csv: newCSVReader(bytes.NewReader(data))}
		last := int64(0)
		for reads := 0; ; reads++ {
			if reads > len(data)+1 {
				t.Fatalf("no end after %d reads of a %d-byte file", reads, len(data))
			}
			_, offset, err := in.Read()
			if offset < last || offset > int64(len(data)) {
				t.Fatalf("offset %d after %d (file of %d bytes)", offset, last, len(data))
			}
			last = offset
			if errors.Is(err, io.EOF) {
				return
			}
			var re *RowError
			if err != nil && !errors.As(err, &re) {
				t.Fatalf("read: %v is not a row error", err)
			}
		}
	})
}
