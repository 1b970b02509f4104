package redisserver

import "syscall"

// procAttr makes the kernel stop redis-server if the test binary dies without cleaning up
// (killed by a timeout, say), so that no server outlives its test.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
