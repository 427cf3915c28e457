"""What pip does when two installed wheels hold the same file, as the cu12 and cu13 cuDNN wheels
do, and one of them is uninstalled: two tiny wheels, a throw-away environment, no download."""
# snippet: timeout=180
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

work = Path(tempfile.mkdtemp())


def wheel(name: str, text: str) -> Path:
    """A minimal wheel that installs nvidia_demo/cudnn/lib/libdemo.so.9 (one shared path)."""
    stem = name.replace("-", "_")  # a wheel's file name spells the project with underscores
    path = work / f"{stem}-1.0-py3-none-any.whl"
    info = f"{stem}-1.0.dist-info"
    files = {"nvidia_demo/cudnn/lib/libdemo.so.9": text,
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: demo\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{f},,\n" for f in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name_in_wheel, content in files.items():
            z.writestr(name_in_wheel, content)
    return path


# --8<-- [start:show]
# wheel(name, text): a minimal wheel that installs nvidia_demo/cudnn/lib/libdemo.so.9, the one
# path both wheels share (above, in the whole program)
env = work / "env"
subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
pip = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"),
       "--disable-pip-version-check", "--no-cache-dir"]
site = next((env / "lib").glob("python3*")) / "site-packages"
shared = site / "nvidia_demo/cudnn/lib/libdemo.so.9"

for name in ("demo-cudnn-cu12", "demo-cudnn-cu13"):  # installed one after the other
    subprocess.run(pip + ["install", "-q", "--no-index", str(wheel(name, f"{name}'s library"))],
                   check=True)
print("both installed; the shared file holds:", shared.read_text())
subprocess.run(pip + ["uninstall", "-q", "-y", "demo-cudnn-cu12"], check=True)
listed = sorted(p.name.split("-")[0].replace("_", "-")  # what pip lists as installed
                for p in site.glob("demo_cudnn_*.dist-info"))
print("after `pip uninstall demo-cudnn-cu12`, still installed:", " ".join(listed))
print("the shared file still there:", shared.exists())
subprocess.run(pip + ["install", "-q", "--no-index", "--force-reinstall",
                      str(work / "demo_cudnn_cu13-1.0-py3-none-any.whl")], check=True)
print("after `pip install --force-reinstall` of cu13:", shared.read_text())
# --8<-- [end:show]
assert not shared.exists() or shared.read_text() == "demo-cudnn-cu13's library"
assert listed == ["demo-cudnn-cu13"], listed
