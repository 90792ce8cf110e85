package interop_test

// sysMemfdCreate is memfd_create's system call number (the syscall
// package does not name it).
const sysMemfdCreate = 279
