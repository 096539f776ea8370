//! System calls rustix does not wrap, made with the `syscall` instruction
//! itself: libc's `syscall()` is one of this library's hooks.

/// `name_to_handle_at(2)`.
#[cfg(target_arch = "x86_64")]
pub const SYS_NAME_TO_HANDLE_AT: usize = 303;
#[cfg(target_arch = "aarch64")]
pub const SYS_NAME_TO_HANDLE_AT: usize = 264;

/// A five-argument system call; the kernel's return value (`-errno` on
/// failure).
///
/// # Safety
/// The arguments must be valid for system call `nr`.
#[cfg(target_arch = "x86_64")]
#[inline]
pub unsafe fn syscall5(nr: usize, a: usize, b: usize, c: usize, d: usize, e: usize) -> isize {
    let ret: isize;
    // SAFETY: the x86_64 Linux system call convention; the caller vouches
    // for the arguments.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a, in("rsi") b, in("rdx") c, in("r10") d, in("r8") e,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// A five-argument system call; the kernel's return value (`-errno` on
/// failure).
///
/// # Safety
/// The arguments must be valid for system call `nr`.
#[cfg(target_arch = "aarch64")]
#[inline]
pub unsafe fn syscall5(nr: usize, a: usize, b: usize, c: usize, d: usize, e: usize) -> isize {
    let ret: isize;
    // SAFETY: the aarch64 Linux system call convention; the caller vouches
    // for the arguments.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a as isize => ret,
            in("x1") b, in("x2") c, in("x3") d, in("x4") e,
            options(nostack),
        );
    }
    ret
}
