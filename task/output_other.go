//go:build !unix

package task

// oNoFollow is zero where the platform has no O_NOFOLLOW; os.Root and
// O_EXCL still refuse to follow a planted link there.
const oNoFollow = 0
