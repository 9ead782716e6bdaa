//! GitHub Apps: apps identified by an RS256 JWT signed with their private key, installations
//! on accounts (organisations or users) with granted permissions, and installation access
//! tokens (`ghs_…`) that expire, reach only the installation's account (and the repositories
//! they were minted for), and carry only the permissions they were minted with.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use rustls::SignatureScheme;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde_json::{Value, json};

/// One registered app.
#[derive(Debug, Clone)]
pub struct App {
    pub id: u64,
    pub slug: String,
    /// DER `RSAPublicKey` that verifies the app's JWTs.
    pub public_key: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct Installation {
    pub id: u64,
    pub app_id: u64,
    pub account: String,
    /// Granted permissions (`contents` → `write`, …).
    pub permissions: BTreeMap<String, String>,
    pub seq: u64,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub installation: u64,
    pub expires: SystemTime,
    pub permissions: BTreeMap<String, String>,
    /// Lower-case repository names the token is limited to; `None`: the whole account.
    pub repositories: Option<BTreeSet<String>>,
}

/// Who a request is from.
#[derive(Debug, Clone)]
pub enum Principal {
    Anonymous,
    /// A personal access token (or any token, when the fake accepts any).
    Token,
    /// An app, by JWT.
    App(u64),
    /// An installation access token.
    Installation {
        id: u64,
        account: String,
        permissions: BTreeMap<String, String>,
        repositories: Option<BTreeSet<String>>,
    },
}

#[derive(Debug)]
pub struct Apps {
    pub apps: Vec<App>,
    pub installations: Vec<Installation>,
    pub tokens: HashMap<String, Token>,
    pub lifetime: Duration,
    /// Installation tokens minted so far.
    pub minted: usize,
}

impl Default for Apps {
    fn default() -> Self {
        Apps {
            apps: Vec::new(),
            installations: Vec::new(),
            tokens: HashMap::new(),
            lifetime: Duration::from_secs(3600),
            minted: 0,
        }
    }
}

pub fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn b64url(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// Sign a GitHub App JWT (RS256) with a PEM private key (PKCS#1 or PKCS#8) — what an app
/// sends as `Authorization: Bearer …` (tests; the forge makes its own).
pub fn sign_jwt(app_id: u64, private_key_pem: &str, iat: u64, exp: u64) -> String {
    let der = PrivateKeyDer::from_pem_slice(private_key_pem.as_bytes()).expect("a PEM private key");
    let key = rustls::crypto::ring::sign::any_supported_type(&der).expect("an RSA key");
    let signer = key
        .choose_scheme(&[SignatureScheme::RSA_PKCS1_SHA256])
        .expect("RS256");
    let head = b64url(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = b64url(
        json!({"iat": iat, "exp": exp, "iss": app_id.to_string()})
            .to_string()
            .as_bytes(),
    );
    let input = format!("{head}.{claims}");
    let sig = signer.sign(input.as_bytes()).expect("sign");
    format!("{input}.{}", b64url(&sig))
}

/// A minimal DER reader: `(tag, content, rest)`.
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&l, mut b) = b.split_first()?;
    let len = if l < 0x80 {
        l as usize
    } else {
        let n = (l & 0x7f) as usize;
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let v = b[..n].iter().fold(0usize, |a, x| (a << 8) | *x as usize);
        b = &b[n..];
        v
    };
    (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
}

fn der_len(n: usize) -> Vec<u8> {
    if n < 0x80 {
        vec![n as u8]
    } else {
        let bytes: Vec<u8> = n
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        let mut out = vec![0x80 | bytes.len() as u8];
        out.extend(bytes);
        out
    }
}

/// The DER `RSAPublicKey` of a PEM RSA private key (PKCS#1 or PKCS#8).
pub fn rsa_public_key(private_key_pem: &str) -> Result<Vec<u8>, String> {
    let key = PrivateKeyDer::from_pem_slice(private_key_pem.as_bytes())
        .map_err(|e| format!("not a PEM private key: {e:?}"))?;
    let pkcs1: Vec<u8> = match &key {
        PrivateKeyDer::Pkcs1(k) => k.secret_pkcs1_der().to_vec(),
        PrivateKeyDer::Pkcs8(k) => {
            // PrivateKeyInfo ::= SEQUENCE { version, AlgorithmIdentifier, OCTET STRING }
            let (_, info, _) = der(k.secret_pkcs8_der()).ok_or("bad PKCS#8")?;
            let (_, _, rest) = der(info).ok_or("bad PKCS#8")?;
            let (_, _, rest) = der(rest).ok_or("bad PKCS#8")?;
            let (_, octets, _) = der(rest).ok_or("bad PKCS#8")?;
            octets.to_vec()
        }
        _ => return Err("not an RSA key".into()),
    };
    // RSAPrivateKey ::= SEQUENCE { version, modulus, publicExponent, … }
    let (_, seq, _) = der(&pkcs1).ok_or("bad RSA key")?;
    let (_, _, rest) = der(seq).ok_or("bad RSA key")?;
    let n_len = rest.len() - der(rest).ok_or("bad RSA key")?.2.len();
    let (n_tlv, rest) = rest.split_at(n_len);
    let e_len = rest.len() - der(rest).ok_or("bad RSA key")?.2.len();
    let e_tlv = &rest[..e_len];
    let mut body = n_tlv.to_vec();
    body.extend_from_slice(e_tlv);
    let mut out = vec![0x30];
    out.extend(der_len(body.len()));
    out.extend(body);
    Ok(out)
}

impl Apps {
    /// Verify an app JWT as GitHub does: RS256 by a registered app (`iss`), `iat` not in the
    /// future (60 s of clock drift allowed), `exp` in the future and at most 10 minutes
    /// after now. The error is GitHub's message.
    pub fn verify_jwt(&self, jwt: &str) -> Result<u64, String> {
        let undecodable = || "A JSON web token could not be decoded".to_string();
        let parts: Vec<&str> = jwt.split('.').collect();
        let [head, claims, sig] = parts.as_slice() else {
            return Err(undecodable());
        };
        let dec = |s: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .ok()
        };
        let header: Value = dec(head)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(undecodable)?;
        let claims_v: Value = dec(claims)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(undecodable)?;
        let sig = dec(sig).ok_or_else(undecodable)?;
        if header["alg"] != "RS256" {
            return Err(undecodable());
        }
        let iss = match &claims_v["iss"] {
            Value::String(s) => s.parse::<u64>().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
        .ok_or("'Issuer' claim ('iss') must be an Integer")?;
        let app = self
            .apps
            .iter()
            .find(|a| a.id == iss)
            .ok_or("Integration not found")?;
        let provider = rustls::crypto::ring::default_provider();
        let algs = provider
            .signature_verification_algorithms
            .mapping
            .iter()
            .find(|(s, _)| *s == SignatureScheme::RSA_PKCS1_SHA256)
            .map(|(_, a)| *a)
            .unwrap_or_default();
        let input = format!("{head}.{claims}");
        if !algs.iter().any(|a| {
            a.verify_signature(&app.public_key, input.as_bytes(), &sig)
                .is_ok()
        }) {
            return Err(undecodable());
        }
        let now = unix(SystemTime::now());
        let iat = claims_v["iat"]
            .as_u64()
            .ok_or("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")?;
        let exp = claims_v["exp"].as_u64().ok_or(
            "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        )?;
        if iat > now + 60 {
            return Err("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued".into());
        }
        if exp <= now {
            return Err("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires".into());
        }
        if exp > now + 600 + 60 {
            return Err("'Expiration time' claim ('exp') is too far in the future".into());
        }
        Ok(iss)
    }

    /// Who presents `token`; `Err` is GitHub's 401 message.
    pub fn principal(&self, token: &str) -> Option<Result<Principal, String>> {
        if token.starts_with("eyJ") && token.matches('.').count() == 2 {
            return Some(self.verify_jwt(token).map(Principal::App));
        }
        let t = self.tokens.get(token)?;
        if SystemTime::now() >= t.expires {
            return Some(Err("Bad credentials".into()));
        }
        let inst = self.installations.iter().find(|i| i.id == t.installation)?;
        Some(Ok(Principal::Installation {
            id: inst.id,
            account: inst.account.clone(),
            permissions: t.permissions.clone(),
            repositories: t.repositories.clone(),
        }))
    }

    pub fn installation_for(&self, app_id: u64, account: &str) -> Option<&Installation> {
        self.installations
            .iter()
            .find(|i| i.app_id == app_id && i.account.eq_ignore_ascii_case(account))
    }
}

/// The permission an operation needs from an installation token: `(permission, level)`;
/// `None` for what every installation may read (repository metadata).
pub fn needed_permission(
    write: bool,
    rest: &[&str],
) -> Option<(&'static [&'static str], &'static str)> {
    let level = if write { "write" } else { "read" };
    match rest {
        [] if !write => None,
        // Branch protection: "Administration" (`…/branches/{branch}/protection[/…]`).
        ["branches", ..] if rest.contains(&"protection") => Some((&["administration"], level)),
        ["pulls", ..] => Some((&["pull_requests"], level)),
        ["actions", ..] => Some((&["actions"], level)),
        ["issues", ..] => Some((&["issues", "pull_requests"], level)),
        _ => Some((&["contents"], level)),
    }
}

/// Whether granted permissions cover `level` of one of `names`.
pub fn grants(perms: &BTreeMap<String, String>, names: &[&str], level: &str) -> bool {
    names
        .iter()
        .any(|n| match perms.get(*n).map(String::as_str) {
            Some("write") | Some("admin") => true,
            Some("read") => level == "read",
            _ => false,
        })
}
