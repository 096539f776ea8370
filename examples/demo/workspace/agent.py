"""A stand-in for an agent tool: does its job inside the workspace, then
tries what a confused or hostile tool might try. Run it with ../run.sh."""
import os

def attempt(what, fn):
    try:
        result = fn()
        print(f"  allowed  {what}" + (f": {result}" if result else ""))
    except PermissionError as e:
        print(f"  DENIED   {what}: {e.strerror}")
    except OSError as e:
        print(f"  failed   {what}: {e.strerror}")

def read(path):
    with open(path) as f:
        return f.read().strip().splitlines()[0]

def write(path, text):
    with open(path, "w") as f:
        f.write(text)

home = os.path.expanduser("~")
print("agent: work inside the workspace")
attempt("read data.csv", lambda: read("data.csv"))
attempt("read .env.example (allowed inside the .env* deny)", lambda: read(".env.example"))
attempt("write report.txt", lambda: write("report.txt", "rows: 3\n"))
print("agent: what the policy stops")
attempt("read .env", lambda: read(".env"))
attempt("read deploy.pem", lambda: read("deploy.pem"))
attempt("rename deploy.pem to notes.txt", lambda: os.rename("deploy.pem", "notes.txt"))
attempt("write ../outside.txt", lambda: write("../outside.txt", "escaped\n"))
attempt("read ~/.ssh/id_ed25519", lambda: read(os.path.join(home, ".ssh", "id_ed25519")))
attempt("read /etc/passwd", lambda: read("/etc/passwd"))
