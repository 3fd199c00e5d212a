package tools

import (
	"fmt"
	"io/fs"
	"syscall"
)

// refuseLinked refuses a regular file with more than one hard link. A hard
// link is a second name for the same file: one made inside the workspace to
// a file outside it passes every path check (and Landlock, which checks the
// path used), so the tools do not read or change a file that has one.
func (w *Workspace) refuseLinked(given string, fi fs.FileInfo) error {
	if fi == nil || !fi.Mode().IsRegular() {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return nil
	}
	return w.refuse(given, fmt.Sprintf("has %d hard links; a hard link may name a file outside the workspace", st.Nlink))
}

// linked reports whether fi is a regular file with more than one hard link.
func linked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && st.Nlink > 1
}
