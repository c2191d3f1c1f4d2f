# Sourced by the tools' check scripts: finds Python (and NumPy) or says why the check is
# skipped. `need_python LABEL` and `need_numpy LABEL` return 1 after printing
# "SKIPPED: LABEL: …" (the caller then exits 0); need_numpy installs NumPy with pip first if
# it is missing.

need_python() {
    if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIPPED: $1: python3 is not installed"
        return 1
    fi
}

need_numpy() {
    need_python "$1" || return 1
    if ! python3 -c 'import numpy' >/dev/null 2>&1; then
        echo "$1: installing NumPy with pip"
        if ! python3 -m pip install --quiet numpy >/dev/null 2>&1 \
            || ! python3 -c 'import numpy' >/dev/null 2>&1; then
            echo "SKIPPED: $1: NumPy is not installed and pip could not install it"
            return 1
        fi
    fi
}
