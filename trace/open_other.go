//go:build !unix

package trace

// oFlags is zero where the platform has no O_NOFOLLOW; openFile checks for
// a link with Lstat first there.
const oFlags = 0

func isLinkError(error) bool { return false }
