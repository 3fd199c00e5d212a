package events

import "time"

// validTimestamp reports whether s is an RFC 3339 time, as
// time.Parse(time.RFC3339Nano, s) decides. Timestamps in TimeFormat, what
// Cairn writes, are checked without time.Parse.
func validTimestamp(s string) bool {
	if isTimeFormat(s) {
		return true
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// isTimeFormat reports whether s is a valid date and time in TimeFormat
// (2006-01-02T15:04:05.000Z); false means only that it is not that.
func isTimeFormat(s string) bool {
	if len(s) != len("2006-01-02T15:04:05.000Z") || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
		s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22} {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return false
	}
	return num(11, 2) < 24 && num(14, 2) < 60 && num(17, 2) < 60
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
