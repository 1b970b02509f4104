//go:build !linux

package redisserver

import "syscall"

// procAttr has nothing to add where the kernel cannot stop a child with its parent.
func procAttr() *syscall.SysProcAttr { return nil }
