"""Every write surface of os, io, pathlib and shutil (as listed in the hermetic
seed document), plus some reads, one per invocation, for tests/python_surfaces.rs.

    python3 surfaces.py list            -> "write NAME" / "read NAME" lines
    python3 surfaces.py setup DIR       -> create the fixture tree in DIR
    python3 surfaces.py run NAME DIR    -> chdir(DIR), run surface NAME, print
        RESULT name=NAME outcome=ok|<ExceptionClass> errno=<n>|none [detail=...]

The fixture (relative to DIR):
    f.txt           "hello\\n", 0644
    g.txt           "other\\n", 0644
    emptydir/
    sub/inner.txt   "inner\\n"
    tree/a.txt      "a\\n"            (source for rmtree/copytree/make_archive)
    extract/                         (empty; unpack_archive target)
    archive.tar     one member "member.txt"
    archive.zip     one member "member.txt"
Write surfaces really write (so that without the guard they change the tree;
the test checks that too, so an accidental no-op cannot pass as "blocked").
"""
import io
import os
import pathlib
import posix
import shutil
import sys

WRITES = {}
READS = {}


def write(fn):
    WRITES[fn.__name__] = fn
    return fn


def read(fn):
    READS[fn.__name__] = fn
    return fn


def osopen_write(path, flags, mode=0o644):
    fd = os.open(path, flags, mode)
    try:
        if flags & (os.O_WRONLY | os.O_RDWR):
            os.write(fd, b"X")
    finally:
        os.close(fd)


# --- builtins.open / io.open -------------------------------------------------

@write
def builtins_open_w():
    with open("f.txt", "w") as f:
        f.write("new")


@write
def builtins_open_wb():
    with open("f.txt", "wb") as f:
        f.write(b"new")


@write
def builtins_open_a():
    with open("f.txt", "a") as f:
        f.write("more")


@write
def builtins_open_a_plus():
    with open("f.txt", "a+") as f:
        f.write("more")


@write
def builtins_open_x():
    with open("new.txt", "x") as f:
        f.write("new")


@write
def builtins_open_r_plus():
    with open("f.txt", "r+") as f:
        f.write("J")


@write
def builtins_open_w_plus_new():
    with open("new.txt", "w+") as f:
        f.write("new")


@write
def io_open_w():
    with io.open("f.txt", "w") as f:
        f.write("new")


@write
def io_open_a():
    with io.open("f.txt", "a") as f:
        f.write("more")


# --- os.open / posix.open ----------------------------------------------------

@write
def os_open_wronly():
    osopen_write("f.txt", os.O_WRONLY)


@write
def os_open_rdwr():
    osopen_write("f.txt", os.O_RDWR)


@write
def os_open_wronly_append():
    osopen_write("f.txt", os.O_WRONLY | os.O_APPEND)


@write
def os_open_rdonly_append():
    # O_APPEND alone is a write by the rules; nothing on disk changes even
    # without the guard (no write possible on an O_RDONLY fd).
    osopen_write("f.txt", os.O_RDONLY | os.O_APPEND)


@write
def os_open_rdonly_creat():
    osopen_write("new.txt", os.O_RDONLY | os.O_CREAT)


@write
def os_open_rdonly_trunc():
    osopen_write("f.txt", os.O_RDONLY | os.O_TRUNC)


@write
def os_open_wronly_creat_trunc():
    osopen_write("new.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)


@write
def os_open_creat_excl():
    osopen_write("new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)


@write
def os_open_trunc_existing():
    osopen_write("f.txt", os.O_WRONLY | os.O_TRUNC)


@write
def posix_open_wronly():
    fd = posix.open("f.txt", os.O_WRONLY)
    os.write(fd, b"X")
    os.close(fd)


# --- os mutators ---------------------------------------------------------------

@write
def os_remove():
    os.remove("f.txt")


@write
def os_unlink():
    os.unlink("f.txt")


@write
def os_rename():
    os.rename("f.txt", "renamed.txt")


@write
def os_replace():
    os.replace("f.txt", "g.txt")


@write
def os_rmdir():
    os.rmdir("emptydir")


@write
def os_mkdir():
    os.mkdir("newdir")


@write
def os_makedirs():
    os.makedirs("a/b/c")


@write
def os_chmod():
    os.chmod("f.txt", 0o600)


@write
def os_chown():
    os.chown("f.txt", os.getuid(), os.getgid())


@write
def os_link():
    os.link("f.txt", "hard.txt")


@write
def os_symlink():
    os.symlink("f.txt", "sym.txt")


@write
def os_truncate():
    os.truncate("f.txt", 1)


@write
def os_utime():
    os.utime("f.txt", (1000000000, 1000000000))


# --- pathlib.Path ----------------------------------------------------------------

P = pathlib.Path


@write
def path_open_w():
    with P("f.txt").open("w") as f:
        f.write("new")


@write
def path_write_text():
    P("f.txt").write_text("new")


@write
def path_write_bytes():
    P("f.txt").write_bytes(b"new")


@write
def path_chmod():
    P("f.txt").chmod(0o600)


@write
def path_hardlink_to():
    P("hard.txt").hardlink_to("f.txt")


@write
def path_mkdir():
    P("newdir").mkdir()


@write
def path_mkdir_parents():
    P("p/q").mkdir(parents=True)


@write
def path_rename():
    P("f.txt").rename("renamed.txt")


@write
def path_replace():
    P("f.txt").replace("g.txt")


@write
def path_rmdir():
    P("emptydir").rmdir()


@write
def path_symlink_to():
    P("sym.txt").symlink_to("f.txt")


@write
def path_touch_existing():
    P("f.txt").touch()


@write
def path_touch_new():
    P("new.txt").touch()


@write
def path_unlink():
    P("f.txt").unlink()


# --- shutil ----------------------------------------------------------------------

@write
def shutil_rmtree():
    shutil.rmtree("tree")


@write
def shutil_move():
    shutil.move("f.txt", "moved.txt")


@write
def shutil_copy():
    shutil.copy("f.txt", "copy.txt")


@write
def shutil_copy2():
    shutil.copy2("f.txt", "copy.txt")


@write
def shutil_copyfile():
    shutil.copyfile("f.txt", "copy.txt")


@write
def shutil_copytree():
    shutil.copytree("tree", "tree_copy")


@write
def shutil_chown():
    shutil.chown("f.txt", user=os.getuid())


@write
def shutil_make_archive_tar():
    shutil.make_archive(os.path.abspath("arch"), "tar", root_dir="tree")


@write
def shutil_make_archive_zip():
    shutil.make_archive(os.path.abspath("arch"), "zip", root_dir="tree")


@write
def shutil_unpack_archive_tar():
    shutil.unpack_archive("archive.tar", "extract")


@write
def shutil_unpack_archive_zip():
    shutil.unpack_archive("archive.zip", "extract")


# --- reads (must keep working under FSGUARD_READONLY=1) ----------------------------

def expect(cond, what):
    if not cond:
        raise AssertionError(what)


@read
def read_builtins_open():
    with open("f.txt") as f:
        expect(f.read() == "hello\n", "content of f.txt")


@read
def read_builtins_open_rb():
    with open("sub/inner.txt", "rb") as f:
        expect(f.read() == b"inner\n", "content of sub/inner.txt")


@read
def read_io_open():
    with io.open("f.txt", "r") as f:
        expect(f.read() == "hello\n", "content")


@read
def read_os_open_rdonly():
    fd = os.open("f.txt", os.O_RDONLY)
    try:
        expect(os.read(fd, 100) == b"hello\n", "content")
    finally:
        os.close(fd)


@read
def read_path_read_text():
    expect(P("g.txt").read_text() == "other\n", "content of g.txt")


@read
def read_listdir():
    names = sorted(os.listdir("."))
    expect(names == sorted(["f.txt", "g.txt", "emptydir", "sub", "tree", "extract",
                            "archive.tar", "archive.zip"]), "listdir: %r" % names)


@read
def read_scandir_walk():
    found = sorted(os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs)
    expect("sub/inner.txt" in found and "tree/a.txt" in found, "walk: %r" % found)


@read
def read_path_iterdir_glob():
    expect(sorted(p.name for p in P("sub").iterdir()) == ["inner.txt"], "iterdir")
    expect([p.name for p in P(".").glob("*.tar")] == ["archive.tar"], "glob")


@read
def read_stat_exists():
    expect(os.path.exists("f.txt") and os.path.isdir("sub"), "stat")


@read
def read_shutil_copyfileobj_to_stdout_devnull():
    # Reading a file and writing to /dev/null (a built-in allowed device).
    with open("f.txt", "rb") as src, open(os.devnull, "wb") as dst:
        shutil.copyfileobj(src, dst)


@read
def read_tarfile_list():
    import tarfile
    with tarfile.open("archive.tar") as t:
        expect(t.getnames() == ["member.txt"], "tar names")


def setup(d):
    import tarfile
    import zipfile

    def w(rel, text):
        p = os.path.join(d, rel)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o644)

    for sub in ("emptydir", "sub", "tree", "extract"):
        os.mkdir(os.path.join(d, sub))
    w("f.txt", "hello\n")
    w("g.txt", "other\n")
    w("sub/inner.txt", "inner\n")
    w("tree/a.txt", "a\n")
    src = os.path.join(d, "member.txt")
    with open(src, "w") as f:
        f.write("member\n")
    with tarfile.open(os.path.join(d, "archive.tar"), "w") as t:
        t.add(src, arcname="member.txt")
    with zipfile.ZipFile(os.path.join(d, "archive.zip"), "w") as z:
        z.write(src, arcname="member.txt")
    os.unlink(src)


def main():
    cmd = sys.argv[1]
    if cmd == "list":
        for n in WRITES:
            print("write", n)
        for n in READS:
            print("read", n)
        return
    if cmd == "setup":
        setup(sys.argv[2])
        return
    if cmd == "run":
        name, d = sys.argv[2], sys.argv[3]
        fn = WRITES.get(name) or READS.get(name)
        if fn is None:
            print("RESULT name=%s outcome=UnknownSurface errno=none" % name)
            sys.exit(2)
        os.chdir(d)
        try:
            fn()
        except BaseException as e:  # report everything, including AssertionError
            err = getattr(e, "errno", None)
            print("RESULT name=%s outcome=%s errno=%s detail=%r" % (
                name, type(e).__name__, "none" if err is None else err, str(e)))
        else:
            print("RESULT name=%s outcome=ok errno=none" % name)
        sys.stdout.flush()
        return
    sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
