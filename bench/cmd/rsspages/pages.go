package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"
)

// build is one binary and its layout.
type build struct {
	name, path string
	env        []string // added to the run's environment
	size       int64
	sections   []section
	symbols    []symbol // sorted by file offset
	samples    []sample
	common     bitmap
}

type section struct {
	name      string
	off, size int64 // in the file
}

// symbol is a named byte range of the file: an ELF symbol, or a piece of
// .gopclntab attributed to a function's package.
type symbol struct {
	fn        string // the function, for pclntab pieces and funcdata
	pkg, kind string
	off, size int64
}

// load reads the binary's sections and symbols.
func (b *build) load() error {
	f, err := elf.Open(b.path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		b.sections = append(b.sections, section{s.Name, int64(s.Offset), int64(s.Size)})
	}
	gofunc := int64(-1)
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w", b.path, err)
	}
	for _, s := range syms {
		if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) || s.Size == 0 {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || sec.Name == ".gopclntab" {
			continue // the pclntab is split by function below
		}
		if s.Name == "go:func.*" {
			gofunc = int64(s.Value-sec.Addr) + int64(sec.Offset)
			continue // split by function below
		}
		b.symbols = append(b.symbols, symbol{"", pkgOf(s.Name), sec.Name, int64(s.Value-sec.Addr) + int64(sec.Offset), int64(s.Size)})
	}
	if pcln := f.Section(".gopclntab"); pcln != nil {
		data, err := pcln.Data()
		if err != nil {
			return err
		}
		b.symbols = append(b.symbols, pclnSymbols(data, int64(pcln.Offset), gofunc)...)
	}
	return nil
}

// pkgOf returns the package a Go symbol name belongs to, or the name's
// kind for the linker's anonymous data (go:string.*, type:* of builtins).
func pkgOf(name string) string {
	for _, p := range []string{"type:.eq.", "type:.namedata.", "type:.importpath.", "type:*", "type:", "go:info.", "gclocals·", "go:cuinfo."} {
		if strings.HasPrefix(name, p) {
			rest := strings.TrimPrefix(name, p)
			if k := pkgPath(rest); k != "" {
				return k
			}
			return p
		}
	}
	if strings.HasPrefix(name, "go:") {
		if i := strings.IndexAny(name, ".*"); i > 0 {
			return name[:i]
		}
		return name
	}
	if k := pkgPath(name); k != "" {
		return k
	}
	return name
}

func pkgPath(name string) string {
	name = strings.TrimLeft(name, "*[]")
	if strings.HasPrefix(name, "map[") || strings.HasPrefix(name, "func(") || strings.HasPrefix(name, "struct {") || strings.HasPrefix(name, "chan ") || strings.HasPrefix(name, "interface {") {
		return "(composite types)"
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return name[:slash+1+dot]
}

// pclnSymbols splits a Go 1.20+ pclntab into pieces attributed to packages:
// each function's _func record and its pc-value tables (pcsp, pcfile,
// pcln, pcdata) by the function's name, and the tables shared by all
// (function names, file table, function table) by what they are.
func pclnSymbols(data []byte, base, gofunc int64) []symbol {
	if len(data) < 8+8*8 {
		return nil
	}
	le := binary.LittleEndian
	word := func(i int) int64 { return int64(le.Uint64(data[8+i*8:])) }
	nfunc := int(word(0))
	funcnameOff, cuOff, filetabOff, pctabOff, funcdataOff := word(3), word(4), word(5), word(6), word(7)
	syms := []symbol{
		{"", "(pclntab header)", "pclntab header", base, funcnameOff},
		{"", "(pclntab func names)", "pclntab function names", base + funcnameOff, cuOff - funcnameOff},
		{"", "(pclntab cu and file tables)", "pclntab cu and file tables", base + cuOff, pctabOff - cuOff},
		{"", "(pclntab functab)", "pclntab functab", base + funcdataOff, int64(nfunc+1) * 8},
	}
	_ = filetabOff
	type fn struct {
		name, pkg string
		rec, end  int64
		tabs      []int64
		funcdata  []int64
	}
	var fns []fn
	ft := data[funcdataOff:]
	for i := 0; i < nfunc; i++ {
		off := int64(le.Uint32(ft[i*8+4:]))
		rec := funcdataOff + off
		if rec+44 > int64(len(data)) {
			break
		}
		r := data[rec:]
		nameOff := int64(le.Uint32(r[4:]))
		name := cstring(data[funcnameOff+nameOff:])
		npcdata := int(le.Uint32(r[28:]))
		nfuncdata := int(r[43])
		end := int64(44 + 4*npcdata + 4*nfuncdata)
		f := fn{name: name, pkg: pkgOf(name), rec: rec, end: rec + end}
		for _, o := range []int{16, 20, 24} { // pcsp, pcfile, pcln
			if v := int64(le.Uint32(r[o:])); v != 0 {
				f.tabs = append(f.tabs, pctabOff+v)
			}
		}
		for j := 0; j < npcdata; j++ {
			if v := int64(le.Uint32(r[44+4*j:])); v != 0 {
				f.tabs = append(f.tabs, pctabOff+v)
			}
		}
		for j := 0; j < nfuncdata; j++ {
			if v := le.Uint32(r[44+4*npcdata+4*j:]); v != ^uint32(0) && gofunc >= 0 {
				f.funcdata = append(f.funcdata, gofunc+int64(v))
			}
		}
		fns = append(fns, f)
	}
	// Funcdata (stack maps, inline trees, argument info) lie in .rodata
	// after go:func.*, shared between functions when equal; each piece is
	// taken to run to the next one's start, and is given to the first
	// function that names it.
	owner := map[int64]fn{}
	var starts []int64
	for _, f := range fns {
		for _, d := range f.funcdata {
			if _, ok := owner[d]; !ok {
				owner[d] = f
				starts = append(starts, d)
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for i, d := range starts {
		size := int64(64)
		if i+1 < len(starts) {
			size = min(starts[i+1]-d, 4096)
		}
		syms = append(syms, symbol{owner[d].name, owner[d].pkg, "funcdata (in .rodata)", d, size})
	}
	for _, f := range fns {
		syms = append(syms, symbol{f.name, f.pkg, "pclntab _func records", base + f.rec, f.end - f.rec})
		for _, t := range f.tabs {
			// A pc-value table is a varint stream ending in a zero value
			// delta; its length is read from the data.
			syms = append(syms, symbol{f.name, f.pkg, "pclntab pc-value tables", base + t, pcvalueLen(data[t:])})
		}
	}
	return syms
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// pcvalueLen is the length of an encoded pc-value table: pairs of varints
// (value delta, pc delta) ending in a single zero byte.
func pcvalueLen(b []byte) int64 {
	i := 0
	first := true
	for i < len(b) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			break
		}
		i += n
		if v == 0 && !first {
			return int64(i)
		}
		first = false
		_, n = binary.Uvarint(b[i:])
		if n <= 0 {
			break
		}
		i += n
	}
	return int64(i)
}

// sectionResident is the resident bytes of the common pages in a section.
func (b *build) sectionResident(name string) int64 {
	var n int64
	for _, s := range b.sections {
		if s.name != name {
			continue
		}
		for p := s.off / pageSize; p*pageSize < s.off+s.size; p++ {
			if b.common.has(int(p)) {
				lo, hi := max(p*pageSize, s.off), min((p+1)*pageSize, s.off+s.size)
				n += hi - lo
			}
		}
	}
	return n
}

// kindResident attributes the bytes of resident pages to kinds of data:
// the section of an ELF symbol, or the part of the pclntab.
func (b *build) kindResident() map[string]int64 {
	out := map[string]int64{}
	for _, s := range b.symbols {
		for p := s.off / pageSize; p*pageSize < s.off+s.size; p++ {
			if b.common.has(int(p)) {
				lo, hi := max(p*pageSize, s.off), min((p+1)*pageSize, s.off+s.size)
				out[s.kind] += hi - lo
			}
		}
	}
	return out
}

// packageResident attributes the bytes of resident pages to the packages
// of the symbols on them.
func (b *build) packageResident() map[string]int64 {
	out := map[string]int64{}
	for _, s := range b.symbols {
		for p := s.off / pageSize; p*pageSize < s.off+s.size; p++ {
			if b.common.has(int(p)) {
				lo, hi := max(p*pageSize, s.off), min((p+1)*pageSize, s.off+s.size)
				out[s.pkg] += hi - lo
			}
		}
	}
	return out
}

func comparePackages(out *os.File, a, b *build, n int) {
	ka, kb := a.kindResident(), b.kindResident()
	var kinds []string
	for k := range ka {
		kinds = append(kinds, k)
	}
	for k := range kb {
		if _, ok := ka[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	fmt.Fprintf(out, "Resident KB by kind of data:\n\n| kind | %s | %s | difference |\n|---|---|---|---|\n", a.name, b.name)
	for _, k := range kinds {
		fmt.Fprintf(out, "| %s | %d | %d | %+d |\n", k, ka[k]/1024, kb[k]/1024, (kb[k]-ka[k])/1024)
	}
	fmt.Fprintln(out)
	ra, rb := a.packageResident(), b.packageResident()
	type row struct {
		pkg    string
		ka, kb int64
	}
	var rows []row
	for k := range ra {
		rows = append(rows, row{k, ra[k], rb[k]})
	}
	for k := range rb {
		if _, ok := ra[k]; !ok {
			rows = append(rows, row{k, 0, rb[k]})
		}
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	sortRows := func() {
		for i := 1; i < len(rows); i++ {
			for j := i; j > 0 && abs(rows[j].kb-rows[j].ka) > abs(rows[j-1].kb-rows[j-1].ka); j-- {
				rows[j], rows[j-1] = rows[j-1], rows[j]
			}
		}
	}
	sortRows()
	fmt.Fprintf(out, "Resident KB by package (symbols and their pclntab records on common pages), largest differences:\n\n| package | %s | %s | difference |\n|---|---|---|---|\n", a.name, b.name)
	var ta, tb int64
	for _, r := range rows {
		ta += r.ka
		tb += r.kb
	}
	for i, r := range rows {
		if i >= n {
			break
		}
		fmt.Fprintf(out, "| %s | %d | %d | %+d |\n", r.pkg, r.ka/1024, r.kb/1024, (r.kb-r.ka)/1024)
	}
	fmt.Fprintf(out, "| (all attributed) | %d | %d | %+d |\n", ta/1024, tb/1024, (tb-ta)/1024)
}

// bitmap is a set of page numbers.
type bitmap []uint64

func newBitmap(size int64) bitmap { return make(bitmap, (size/pageSize+64)/64) }

func (m bitmap) set(p int) {
	if p/64 < len(m) {
		m[p/64] |= 1 << (p % 64)
	}
}
func (m bitmap) has(p int) bool { return p/64 < len(m) && m[p/64]&(1<<(p%64)) != 0 }
func (m bitmap) count() (n int) {
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// majority is the pages present in at least half the samples.
func majority(ss []sample, size int64) bitmap {
	m := newBitmap(size)
	for p := 0; p < len(m)*64; p++ {
		n := 0
		for _, s := range ss {
			if s.pages.has(p) {
				n++
			}
		}
		if 2*n >= len(ss) && n > 0 {
			m.set(p)
		}
	}
	return m
}

// status reads RssAnon and RssFile from /proc/PID/status, in bytes.
func status(pid int) (anon, file int64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "RssAnon" && k != "RssFile") {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "RssAnon" {
			anon = kb * 1024
		} else {
			file = kb * 1024
		}
	}
	return anon, file
}

// markPresent sets in pages the file pages of bin mapped by pid and present
// in its page tables now.
func markPresent(pid int, bin string, pages bitmap) {
	maps, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return
	}
	defer maps.Close()
	pm, err := os.Open("/proc/" + strconv.Itoa(pid) + "/pagemap")
	if err != nil {
		return
	}
	defer pm.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != bin {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		off, _ := strconv.ParseUint(f[2], 16, 64)
		n := int((end - start) / pageSize)
		buf := make([]byte, 8*n)
		if _, err := pm.ReadAt(buf, int64(start/pageSize*8)); err != nil {
			continue
		}
		for i := 0; i < n; i++ {
			if binary.LittleEndian.Uint64(buf[8*i:])&(1<<63) != 0 {
				pages.set(int(off/pageSize) + i)
			}
		}
	}
}

// windows counts the distinct aligned windows of the given size that hold
// the pclntab records, pc-value tables and funcdata of the named functions:
// the pages the runtime's unwinder reads for them, at the granularity the
// kernel maps them in.
func (b *build) windows(funcs map[string]bool, size int64) (n int, found int) {
	seen := map[int64]bool{}
	names := map[string]bool{}
	for _, s := range b.symbols {
		if s.fn == "" || !funcs[s.fn] || s.kind != "pclntab pc-value tables" && s.kind != "pclntab _func records" && s.kind != "funcdata (in .rodata)" {
			continue
		}
		names[s.fn] = true
		for w := s.off / size; w*size < s.off+s.size; w++ {
			seen[w] = true
		}
	}
	return len(seen), len(names)
}

// explain prints, for the resident pages of each kind of pclntab and
// funcdata bytes, how many lie in a 64 KB window that also holds the
// tables of a function in funcs (functions the runtime was seen to unwind).
func (b *build) explain(out *os.File, funcs map[string]bool) {
	const win = 64 << 10
	hot := map[int64]bool{}
	for _, s := range b.symbols {
		if s.fn != "" && funcs[s.fn] {
			for w := s.off / win; w*win < s.off+s.size; w++ {
				hot[w] = true
			}
		}
	}
	type count struct{ in, out int64 }
	by := map[string]*count{}
	seen := map[int64]bool{}
	for _, s := range b.symbols {
		if s.fn == "" {
			continue
		}
		for p := s.off / pageSize; p*pageSize < s.off+s.size; p++ {
			if !b.common.has(int(p)) || seen[p] {
				continue
			}
			seen[p] = true
			c := by[s.kind]
			if c == nil {
				c = &count{}
				by[s.kind] = c
			}
			if hot[p*pageSize/win] {
				c.in += pageSize
			} else {
				c.out += pageSize
			}
		}
	}
	for k, c := range by {
		fmt.Fprintf(out, "%s: %s: %d KB resident in windows of unwound functions, %d KB elsewhere\n", b.name, k, c.in/1024, c.out/1024)
	}
}
