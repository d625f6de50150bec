/** The Python the torch backend tests run: SVC_PYTHON when set, else the system one that has torch. */
export function torchTestPython(): string {
  return process.env.SVC_PYTHON || '/usr/bin/python3';
}
