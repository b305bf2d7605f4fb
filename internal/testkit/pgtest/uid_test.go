package pgtest

import (
	"os"
	"syscall"
)

func fileUID(fi os.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}
