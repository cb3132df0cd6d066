// Command zipbootstrap packages a Lambda bootstrap binary as a deployment
// zip, so that building does not depend on a zip tool being installed:
//
//	zipbootstrap -o build/users.zip build/users/bootstrap
//
// The archive holds one entry, named "bootstrap" (or -name), with Unix mode
// 0755 as the provided.al2023 runtime requires. The entry's timestamp is
// fixed, so the same binary always gives the same zip.
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// modTime is the fixed timestamp of the entry; the zip format cannot
// express times before 1980.
var modTime = time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("o", "", "`path` of the zip to write (required)")
	name := flag.String("name", "bootstrap", "`name` of the entry in the zip")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: zipbootstrap -o out.zip [-name bootstrap] path/to/bootstrap")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := writeZip(*out, flag.Arg(0), *name); err != nil {
		fmt.Fprintf(os.Stderr, "zipbootstrap: %v\n", err)
		os.Exit(1)
	}
}

// writeZip writes the zip to a temporary file next to out and renames it
// into place, so that an interrupted build never leaves a truncated zip.
func writeZip(out, src, name string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open binary: %w", err)
	}
	defer in.Close()

	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create zip: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()

	zw := zip.NewWriter(tmp)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modTime}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return fmt.Errorf("add %s to zip: %w", name, err)
	}
	if _, err := io.Copy(w, in); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("finish zip: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write zip: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write zip: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write zip: %w", err)
	}
	return nil
}
