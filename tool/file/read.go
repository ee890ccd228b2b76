package file

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// ReadConfig tunes Read. Zero values take the defaults.
type ReadConfig struct {
	// DefaultLimit is how many lines a call returns without a limit (2000).
	DefaultLimit int
	// MaxLineChars cuts longer lines (2000 characters).
	MaxLineChars int
	// MaxOutputBytes bounds one call's text (100,000 bytes).
	MaxOutputBytes int
	// MaxImageBytes bounds images returned as image blocks (3.75 MB, which
	// base64-encodes to the API's 5 MB limit).
	MaxImageBytes int64
}

// NewRead returns the Read tool. Reading changes nothing, so its calls are
// read-only and concurrency-safe. Safe for concurrent use.
func NewRead(cfg ReadConfig) tool.Tool {
	if cfg.DefaultLimit <= 0 {
		cfg.DefaultLimit = 2000
	}
	if cfg.MaxLineChars <= 0 {
		cfg.MaxLineChars = 2000
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = 100_000
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = 3_750_000
	}
	r := &reader{cfg: cfg}
	return tool.New(tool.Spec[readInput]{Name: "Read", Description: readDescription, Input: readSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: r.run})
}

// reader is Read's state: its limits.
type reader struct{ cfg ReadConfig }

const readDescription = `Reads a file from the local filesystem and returns its contents with line numbers.

- file_path must be an absolute path.
- By default up to 2000 lines are returned from the start of the file. For long files, pass offset (the 1-based line to start at) and limit (how many lines) to read the part you need; a note tells you where to continue when output is cut.
- Each line is shown as its line number, a tab, then the text. The number and tab are not part of the file: leave them out of old_string when you Edit.
- Lines longer than 2000 characters are cut off.
- Images (PNG, JPEG, GIF, WebP) are returned as images you can see. Jupyter notebooks (.ipynb) are shown cell by cell with their ids and outputs. Other binary files are refused.
- You can read several files in parallel by making multiple Read calls at once.
- Reading a file is required before you Edit or overwrite it.
- To list a directory use Glob, or ls through Bash; Read only reads files.`

var readSchema = tool.Object(
	tool.Required("file_path", tool.String("The absolute path of the file to read.")),
	tool.Optional("offset", tool.Integer("The line number to start reading from (1-based). Use it with limit for large files.").WithMin(0)),
	tool.Optional("limit", tool.Integer("The number of lines to read.").WithMin(1)),
)

type readInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

func (r *reader) run(ctx context.Context, env *tool.Env, in readInput) (tool.Result, error) {
	path, err := filePath(env, "file_path", in.FilePath)
	if err != nil {
		return tool.Result{}, err
	}
	info, err := statFile(path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		return tool.Result{}, notFound(path)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if mt, ok := imageTypes[ext]; ok {
		return r.readImage(env, path, info, mt)
	}
	if binaryExts[ext] {
		return tool.Result{}, tool.Failf("%s is a binary file (%s); Read only shows text, images and notebooks", path, ext)
	}
	if ext == ".ipynb" {
		if res, ok := r.readNotebook(env, path); ok {
			return res, nil
		}
	}
	return r.readText(ctx, env, path, info, in)
}

func (r *reader) readText(ctx context.Context, env *tool.Env, path string, info fs.FileInfo, in readInput) (tool.Result, error) {
	f, _, err := openRead(env, path)
	if err != nil {
		return tool.Result{}, openFailure(path, err)
	}
	defer f.Close()
	// A small file gets a buffer its size (a Read of a 2 KB file should not
	// allocate and clear 64 KB); Peek needs room for sniffLen.
	bufSize := 64 << 10
	if n := info.Size(); n >= 0 && n < int64(bufSize) {
		bufSize = max(int(n)+1, sniffLen)
	}
	br := bufio.NewReaderSize(f, bufSize)
	head, _ := br.Peek(sniffLen)
	if isBinary(head) {
		return tool.Result{}, tool.Failf("%s looks like a binary file (it contains NUL bytes); Read only shows text. Inspect it through Bash (file, xxd, strings) if you must", path)
	}
	if info.Size() == 0 && len(head) == 0 {
		record(env, path, false)
		res := tool.Text(fmt.Sprintf("(%s exists but is empty.)", path))
		res.Response = &ReadResponse{Type: "text", File: &TextFile{FilePath: path, StartLine: 1}}
		return res, nil
	}
	offset := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 {
		limit = r.cfg.DefaultLimit
	}
	page, err := r.page(ctx, br, offset, limit)
	if err != nil {
		return tool.Result{}, err
	}
	partial := offset > 1 || page.more
	record(env, path, partial)
	resp := &ReadResponse{Type: "text", File: &TextFile{FilePath: path, Content: page.raw, NumLines: page.shown,
		StartLine: offset, TotalLines: page.total}}
	if page.shown == 0 {
		res := tool.Text(fmt.Sprintf("(%s has %s; offset %d is past the end.)", path, plural(page.lastLine, "line"), offset))
		res.Response = resp
		return res, nil
	}
	text := page.text
	switch {
	case page.stoppedForSize:
		text += fmt.Sprintf("\n[Output stopped after line %d to stay under %d bytes; Read again with offset=%d to continue.]",
			page.lastLine, r.cfg.MaxOutputBytes, page.lastLine+1)
	case page.more:
		text += fmt.Sprintf("\n[The file continues after line %d; Read again with offset=%d to see more.]", page.lastLine, page.lastLine+1)
	}
	res := tool.Text(text)
	res.Response = resp
	return res, nil
}

type page struct {
	text           string
	raw            string // the lines shown, without line numbers
	shown          int    // lines in text
	lastLine       int    // number of the last line read
	total          int    // lines in the file
	more           bool   // lines follow the page
	stoppedForSize bool
}

// page reads lines [offset, offset+limit) from br in cat -n form.
func (r *reader) page(ctx context.Context, br *bufio.Reader, offset, limit int) (page, error) {
	var p page
	var out, raw strings.Builder
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return p, ctx.Err()
		}
		line, err := readLine(br, r.cfg.MaxLineChars)
		if err == io.EOF {
			p.total = n - 1
			break
		}
		if err != nil {
			return p, tool.Failf("reading failed at line %d: %v", n, err)
		}
		if n < offset {
			p.lastLine = n
			continue
		}
		if p.shown == limit {
			p.more = true
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, line)
		if !p.more && out.Len()+len(entry) > r.cfg.MaxOutputBytes && p.shown > 0 {
			p.more, p.stoppedForSize = true, true
		}
		if p.more {
			// Line n was read but not shown; the rest is only counted.
			rest, err := countRest(ctx, br)
			if err != nil {
				return p, err
			}
			p.total = n + rest
			break
		}
		out.WriteString(entry)
		raw.WriteString(line + "\n")
		p.shown++
		p.lastLine = n
	}
	p.text = strings.TrimSuffix(out.String(), "\n")
	p.raw = strings.TrimSuffix(raw.String(), "\n")
	return p, nil
}

// countRest counts the lines left in br (a last line without a line break
// counts).
func countRest(ctx context.Context, br *bufio.Reader) (int, error) {
	n, last := 0, byte('\n')
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := br.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, tool.Failf("reading failed while counting lines: %v", err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// readLine returns the next line without its line break (and without a
// trailing \r), cut to maxChars characters with a marker. It returns io.EOF
// only when no line is left.
func readLine(br *bufio.Reader, maxChars int) (string, error) {
	var buf []byte
	cut := false
	maxBytes := maxChars * utf8.UTFMax
	got := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			got = true
		}
		if !cut {
			buf = append(buf, chunk...)
			if len(buf) > maxBytes {
				buf, cut = buf[:maxBytes], true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && got {
			break
		}
		if err != nil {
			return "", err
		}
		break
	}
	s := strings.TrimSuffix(string(buf), "\n")
	s = strings.TrimSuffix(s, "\r")
	if cut || utf8.RuneCountInString(s) > maxChars {
		rs := []rune(s)
		if len(rs) > maxChars {
			s = string(rs[:maxChars])
		}
		s += " … [line cut]"
	}
	return s, nil
}

var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
}

// binaryExts are refused without looking inside: these formats can start
// with long stretches of text-like bytes.
var binaryExts = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`.exe .dll .so .dylib .o .a .lib .obj .class .jar .war .pyc .pyo .wasm
		.zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .iso .dmg .deb .rpm
		.pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp
		.mp3 .mp4 .m4a .mov .avi .mkv .wav .flac .ogg .webm
		.bmp .ico .tif .tiff .psd .heic .avif
		.ttf .otf .woff .woff2 .eot .sqlite .db .bin .dat`) {
		binaryExts[e] = true
	}
}

func (r *reader) readImage(env *tool.Env, path string, info fs.FileInfo, _ string) (tool.Result, error) {
	if info.Size() > r.cfg.MaxImageBytes {
		return tool.Result{}, tool.Failf("%s is an image of %d bytes, more than the %d bytes that can be shown", path, info.Size(), r.cfg.MaxImageBytes)
	}
	data, err := readAll(env, path)
	if err != nil {
		return tool.Result{}, openFailure(path, err)
	}
	mediaType := http.DetectContentType(data)
	if !strings.HasPrefix(mediaType, "image/") {
		return tool.Result{}, tool.Failf("%s has an image extension but its content is not a PNG, JPEG, GIF or WebP image (%s)", path, mediaType)
	}
	record(env, path, false)
	b64 := base64.StdEncoding.EncodeToString(data)
	return tool.Result{Content: []llm.Block{
		llm.Text(fmt.Sprintf("Image %s (%s, %d bytes):", path, mediaType, len(data))),
		{Type: llm.BlockImage, MediaType: mediaType, Data: b64},
	}, Response: &ReadResponse{Type: "image", File: &ImageFile{Base64: b64, Type: mediaType, OriginalSize: len(data)}}}, nil
}
