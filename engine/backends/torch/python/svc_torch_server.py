"""
Entry point of the torch backend's process, run by path (python .../svc_torch_server.py) rather
than with -m: then sys.path starts at this folder, not at the caller's working directory, so a
user's stray torch.py or numpy.py in their project cannot shadow the real packages.
"""

import sys

from svc_torch.server import main

if __name__ == "__main__":
    sys.exit(main())
