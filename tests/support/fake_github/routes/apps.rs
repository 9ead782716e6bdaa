//! GitHub App endpoints (authenticated by the app's JWT): the installation that covers a
//! repository, and minting installation access tokens.

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use serde_json::{Value, json};

use super::super::answer::Ans;
use super::super::app::{Installation, Principal, Token, rfc3339};
use super::super::repr::{self, Urls};
use super::super::state::{World, date_of};
use super::Ctx;

fn installation_json(u: &Urls, app_slug: &str, i: &Installation) -> Value {
    json!({
        "id": i.id, "app_id": i.app_id, "app_slug": app_slug,
        "target_id": repr::account_id(&i.account), "target_type": "Organization",
        "account": repr::user(u, &i.account, "Organization"),
        "repository_selection": "all", "single_file_name": null,
        "access_tokens_url": format!("{}/app/installations/{}/access_tokens", u.api, i.id),
        "repositories_url": format!("{}/installation/repositories", u.api),
        "html_url": format!("{}/organizations/{}/settings/installations/{}", u.web, i.account, i.id),
        "events": [], "permissions": i.permissions,
        "created_at": date_of(i.seq), "updated_at": date_of(i.seq),
        "suspended_by": null, "suspended_at": null,
    })
}

/// `GET /repos/{owner}/{repo}/installation`: 404 when the app is not installed on the owner.
pub fn repo_installation(w: &World, cx: &Ctx, full: &str) -> Ans {
    let Principal::App(app_id) = cx.principal else {
        return Ans::msg(401, "A JSON web token could not be decoded");
    };
    let owner = full.split_once('/').map(|(o, _)| o).unwrap_or(full);
    let slug = w
        .apps
        .apps
        .iter()
        .find(|a| a.id == *app_id)
        .map(|a| a.slug.clone())
        .unwrap_or_default();
    match w.apps.installation_for(*app_id, owner) {
        Some(i) => Ans::json(200, installation_json(cx.urls, &slug, i)),
        None => Ans::not_found(),
    }
}

/// `POST /app/installations/{id}/access_tokens`: a token for the installation's account,
/// optionally limited to some repositories and to some of the granted permissions.
pub fn create_token(w: &mut World, cx: &Ctx, id: &str, body: &Value) -> Ans {
    let Principal::App(app_id) = cx.principal else {
        return Ans::msg(401, "A JSON web token could not be decoded");
    };
    let Some(inst) = w
        .apps
        .installations
        .iter()
        .find(|i| i.id.to_string() == id && i.app_id == *app_id)
        .cloned()
    else {
        return Ans::not_found();
    };
    let mut permissions = inst.permissions.clone();
    if let Some(asked) = body["permissions"].as_object() {
        let mut granted = BTreeMap::new();
        for (name, level) in asked {
            let level = level.as_str().unwrap_or_default();
            let ok = match inst.permissions.get(name).map(String::as_str) {
                Some("write") => level == "read" || level == "write",
                Some(l) => l == level,
                None => false,
            };
            if !ok {
                return Ans::msg(
                    422,
                    "The permissions requested are not granted to this installation.",
                );
            }
            granted.insert(name.clone(), level.to_string());
        }
        granted
            .entry("metadata".into())
            .or_insert_with(|| "read".into());
        permissions = granted;
    }
    let mut repositories = None;
    let mut repo_json = Vec::new();
    if let Some(names) = body["repositories"].as_array() {
        let mut set = BTreeSet::new();
        for n in names {
            let name = n.as_str().unwrap_or_default();
            let full = format!("{}/{name}", inst.account);
            let Some((k, r)) = w.repos.iter().find(|(k, _)| k.eq_ignore_ascii_case(&full)) else {
                return Ans::msg(
                    422,
                    "There is at least one repository that does not exist or is not accessible \
                     to the parent installation.",
                );
            };
            set.insert(name.to_ascii_lowercase());
            repo_json.push(repr::repo(cx.urls, r, k, false));
        }
        repositories = Some(set);
    }
    let expires = SystemTime::now() + w.apps.lifetime;
    let token = format!("ghs_{}", {
        let mut rng = fastrand::Rng::new();
        (0..36).map(|_| rng.alphanumeric()).collect::<String>()
    });
    w.apps.tokens.insert(
        token.clone(),
        Token {
            installation: inst.id,
            expires,
            permissions: permissions.clone(),
            repositories: repositories.clone(),
        },
    );
    w.apps.minted += 1;
    let mut v = json!({
        "token": token, "expires_at": rfc3339(expires), "permissions": permissions,
        "repository_selection": if repositories.is_some() { "selected" } else { "all" },
    });
    if repositories.is_some() {
        v["repositories"] = Value::Array(repo_json);
    }
    Ans::json(201, v)
}
