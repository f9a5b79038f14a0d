"""Verifies a message's DKIM signature with dkimpy, the signer's public
key given instead of asked of DNS.

    python dkim_verify.py MESSAGE.eml PUBLIC_KEY.pem
exit 0 and "pass" when the signature verifies; exit 1, "fail" and
dkimpy's reasons otherwise.
"""

import logging
import sys

import dkim


def main(message_path, key_path):
    with open(message_path, "rb") as f:
        message = f.read()
    with open(key_path, encoding="ascii") as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("-----")]
    record = ("v=DKIM1; k=rsa; p=" + "".join(lines)).encode("ascii")
    asked = []

    def dnsfunc(name, timeout=5):
        asked.append(name)
        return record

    logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="%(message)s")
    ok = dkim.verify(message, logger=logging.getLogger("dkim"), dnsfunc=dnsfunc, minkey=1024)
    print("asked for", b", ".join(asked).decode() if asked and isinstance(asked[0], bytes) else asked)
    print("pass" if ok else "fail")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
