# Sourced by the GPU tests: exits 77 (ctest's SKIP_RETURN_CODE) with "SKIP: no GPU" when no
# NVIDIA driver (libcuda.so.1) can be found where dlopen would look.
have_driver() {
    if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        return 0
    fi
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib \
               /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
        [ -e "$dir/libcuda.so.1" ] && return 0
    done
    # LD_LIBRARY_PATH is where dlopen looks too (containers often put the driver there).
    old_ifs=$IFS
    IFS=:
    for dir in ${LD_LIBRARY_PATH:-}; do
        if [ -n "$dir" ] && [ -e "$dir/libcuda.so.1" ]; then
            IFS=$old_ifs
            return 0
        fi
    done
    IFS=$old_ifs
    return 1
}

if ! have_driver; then
    echo "SKIP: no GPU"
    exit 77
fi
