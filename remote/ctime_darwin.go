package remote

import "syscall"

// ctime is a file's status-change time.
func ctime(st *syscall.Stat_t) syscall.Timespec { return st.Ctimespec }
