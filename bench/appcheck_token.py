"""Writes a JWKS for an RSA key (made with openssl) and prints an App Check
token signed with it: the benchmark's stand-in for Firebase."""
import base64, json, subprocess, sys, time

key, out_dir, project, app_id = sys.argv[1:5]

def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

modulus = subprocess.run(["openssl", "rsa", "-in", key, "-noout", "-modulus"],
                         capture_output=True, text=True, check=True).stdout.strip().split("=", 1)[1]
n = bytes.fromhex(modulus)
jwks = {"keys": [{"kty": "RSA", "kid": "bench", "use": "sig", "alg": "RS256", "n": b64(n), "e": "AQAB"}]}
with open(f"{out_dir}/jwks.json", "w") as f:
    json.dump(jwks, f)
header = {"alg": "RS256", "typ": "JWT", "kid": "bench"}
now = int(time.time())
claims = {"iss": f"https://firebaseappcheck.googleapis.com/{project}", "aud": [f"projects/{project}"],
          "sub": app_id, "iat": now, "exp": now + 3600}
signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=signing_input.encode(),
                     capture_output=True, check=True).stdout
print(f"{signing_input}.{b64(sig)}")
