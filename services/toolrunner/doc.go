// Package toolrunner will execute tool calls taken from the CAIRN_TOOLS work
// subjects, scaled out horizontally, and return results durably (DESIGN §2, §7).
// It is not built yet: `cairn toolrunner` says so and exits 1.
package toolrunner
