# Login shells (an ssh session) get PATH reset by /etc/profile: put the image's Python environment back.
case ":$PATH:" in
    *:/opt/venv/bin:*) ;;
    *) PATH="/opt/venv/bin:$PATH" ;;
esac
export PATH
export PYTHONPATH="${PYTHONPATH:-/opt/verify}" VERIFY_IN_IMAGE=1
