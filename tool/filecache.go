package tool

import (
	"maps"
	"sync"
	"time"
)

// FileState is what an agent knew about a file when it last read or wrote it.
type FileState struct {
	ModTime time.Time
	Size    int64
	// Partial is true when only a range of lines was read.
	Partial bool
}

// FileCache is an agent's read-file state, keyed by absolute path. Subagents
// get a clone, so nothing they read changes the parent's view. Safe for
// concurrent use.
type FileCache struct {
	mu    sync.Mutex
	files map[string]FileState
}

// NewFileCache returns an empty cache.
func NewFileCache() *FileCache { return &FileCache{files: map[string]FileState{}} }

// Get returns the state recorded for path.
func (c *FileCache) Get(path string) (FileState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.files[path]
	return s, ok
}

// Put records the state of path.
func (c *FileCache) Put(path string, s FileState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files[path] = s
}

// Clone returns an independent copy.
func (c *FileCache) Clone() *FileCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &FileCache{files: maps.Clone(c.files)}
}

// Len reports how many files are recorded.
func (c *FileCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files)
}
