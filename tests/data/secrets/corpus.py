"""The secret guard's labelled corpus: generated fake keys (positives) and real text (negatives).

Positives are made here, at run time, from a fixed seed: correctly shaped keys of many formats,
random in their secret part (never real, and never in the repository, so no scanner trips on it),
each set in prose, code, JSON, env files, YAML, URLs or headers. A positive is *caught* when
redaction removes the whole secret and keeps the words around it.

Negatives are `negatives.jsonl` (snippets of real code and prose, see README.md) plus the
hand-written lines below: what a coding agent's notes hold that mentions passwords and tokens
without containing one (the false positives of issue 15), and configs with placeholders.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 1515
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
PASSWORD_CHARS = ALNUM + "!#%^&*+=?~"


@dataclass(frozen=True, slots=True)
class Positive:
    format: str
    context: str
    text: str
    secret: str


@dataclass(frozen=True, slots=True)
class Negative:
    origin: str
    text: str


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, but with a digit and a letter, as every real key of these formats has."""
    while True:
        value = _r(rng, alphabet, n)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _password(rng: random.Random) -> str:
    return _mixed(rng, PASSWORD_CHARS, rng.randint(12, 24))


def _jwt(rng: random.Random) -> str:
    def seg(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = seg({"alg": "HS256", "typ": "JWT"})
    payload = seg({"sub": _r(rng, HEX, 12), "iat": rng.randint(1_600_000_000, 1_800_000_000)})
    return f"{header}.{payload}.{_r(rng, URLSAFE, 43)}"


def _pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(_r(rng, B64, 64) for _ in range(rng.randint(3, 8)))
    label = f"{kind} PRIVATE KEY".strip()
    return f"-----BEGIN {label}-----\n{body}\n{_r(rng, B64, 20)}==\n-----END {label}-----"


#: format -> (secret maker, how it is usually written: "token" for prefixed keys set anywhere)
TOKEN_FORMATS: dict[str, Callable[[random.Random], str]] = {
    "openai_legacy": lambda r: "sk-" + _mixed(r, ALNUM, 48),
    "openai_project": lambda r: "sk-proj-" + _mixed(r, URLSAFE, 156),
    "anthropic_api": lambda r: "sk-ant-api03-" + _mixed(r, URLSAFE, 93) + "AA",
    "anthropic_admin": lambda r: "sk-ant-admin01-" + _mixed(r, URLSAFE, 93) + "AA",
    "stripe_live": lambda r: "sk_live_" + _mixed(r, ALNUM, 99),
    "stripe_restricted": lambda r: "rk_live_" + _mixed(r, ALNUM, 99),
    "stripe_webhook": lambda r: "whsec_" + _mixed(r, ALNUM, 32),
    "github_classic": lambda r: "ghp_" + _mixed(r, ALNUM, 36),
    "github_oauth": lambda r: "gho_" + _mixed(r, ALNUM, 36),
    "github_app": lambda r: "ghs_" + _mixed(r, ALNUM, 36),
    "github_fine": lambda r: "github_pat_" + _mixed(r, ALNUM, 22) + "_" + _mixed(r, ALNUM, 59),
    "gitlab_pat": lambda r: "glpat-" + _mixed(r, URLSAFE, 20),
    "slack_bot": lambda r: f"xoxb-{_r(r, string.digits, 12)}-{_r(r, string.digits, 13)}-{_mixed(r, ALNUM, 24)}",
    "slack_user": lambda r: (
        f"xoxp-{_r(r, string.digits, 12)}-{_r(r, string.digits, 12)}-{_r(r, string.digits, 13)}-{_r(r, HEX, 32)}"
    ),
    "slack_app": lambda r: (
        f"xapp-1-A{_r(r, string.ascii_uppercase + string.digits, 10)}-{_r(r, string.digits, 13)}-{_r(r, HEX, 64)}"
    ),
    "slack_webhook": lambda r: (
        "https://hooks.slack.com/services/T"
        + _mixed(r, string.ascii_uppercase + string.digits, 10)
        + "/B"
        + _mixed(r, string.ascii_uppercase + string.digits, 10)
        + "/"
        + _mixed(r, ALNUM, 24)
    ),
    "discord_webhook": lambda r: (
        f"https://discord.com/api/webhooks/{_r(r, string.digits, 19)}/{_mixed(r, URLSAFE, 68)}"
    ),
    "aws_access_key": lambda r: "AKIA" + _mixed(r, string.ascii_uppercase + "234567", 16),
    "google_api_key": lambda r: "AIza" + _mixed(r, URLSAFE, 35),
    "google_oauth_secret": lambda r: "GOCSPX-" + _mixed(r, URLSAFE, 28),
    "huggingface": lambda r: "hf_" + _r(r, string.ascii_letters, 34),
    "npm": lambda r: "npm_" + _mixed(r, ALNUM, 36),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _mixed(r, URLSAFE, 120),
    "sendgrid": lambda r: f"SG.{_mixed(r, URLSAFE, 22)}.{_mixed(r, URLSAFE, 43)}",
    "twilio": lambda r: "SK" + _mixed(r, HEX, 32),
    "mailgun": lambda r: "key-" + _mixed(r, HEX, 32),
    "telegram_bot": lambda r: f"{r.randint(100_000_000, 999_999_999)}:AA{_mixed(r, URLSAFE, 33)}",
    "digitalocean": lambda r: "dop_v1_" + _mixed(r, HEX, 64),
    "shopify": lambda r: "shpat_" + _mixed(r, HEX, 32),
    "databricks": lambda r: "dapi" + _mixed(r, HEX, 32),
    "linear": lambda r: "lin_api_" + _mixed(r, ALNUM, 40),
    "doppler": lambda r: "dp.st." + _mixed(r, ALNUM, 43),
    "groq": lambda r: "gsk_" + _mixed(r, ALNUM, 52),
    "age": lambda r: "AGE-SECRET-KEY-1" + _r(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "jwt": _jwt,
}

TOKEN_CONTEXTS: dict[str, str] = {
    "prose": "Heads up: the deploy script still uses {s} for staging; rotate it after the demo.",
    "python": 'client = Client(api_key="{s}", timeout=30)',
    "javascript": "const client = new Client({{ key: '{s}' }});",
    "json": '{{"service": "billing", "credentials": {{"value": "{s}"}}, "retries": 3}}',
    "env": "SERVICE_CREDENTIAL={s}\nLOG_LEVEL=debug",
    "yaml": "deploy:\n  region: eu-west-1\n  auth: {s}\n  replicas: 2",
    "shell": "curl -s -H 'X-Api-Key: {s}' https://api.example.org/v1/items",
    "markdown": "Run the job with `{s}` as the key (see the runbook).",
    "table": "| env | key | rotated |\n| --- | --- | --- |\n| prod | {s} | 2026-03 |",
    "xml": '<appSettings>\n  <add key="Upstream" value="{s}" />\n</appSettings>',
    "query": "GET https://api.example.org/cb?code=1&access_token={s}&state=xyz",
}


def _generic_positives(rng: random.Random) -> list[Positive]:
    out: list[Positive] = []

    def add(fmt: str, ctx: str, template: str, secret: str) -> None:
        out.append(Positive(fmt, ctx, template.format(s=secret), secret))

    for _ in range(10):
        pw = _password(rng)
        add("env_password", "env", "APP_ENV=prod\nDB_PASSWORD={s}\nDB_HOST=db.internal", pw)
        pw = _password(rng)
        add("env_password", "shell", 'export REDIS_PASSWORD="{s}"\n./run.sh', pw)
        pw = _password(rng)
        add("code_password", "python", 'conn = connect(host="db", user="app", password="{s}")', pw)
        pw = _password(rng)
        add("code_password", "javascript", "const dbPassword = '{s}';\nconnect(dbPassword);", pw)
        pw = _password(rng)
        add("code_password", "go", 'cfg := Config{{User: "app", Password: "{s}"}}', pw)
        pw = _password(rng)
        add("json_secret", "json", '{{"client_id": "web-ui", "client_secret": "{s}", "scopes": ["read"]}}', pw)
        pw = _password(rng).lstrip("#*&!%@")  # YAML: a comment, alias, anchor, tag or directive
        add("yaml_password", "yaml", "database:\n  user: app\n  password: {s}\n  port: 5432", pw)
        key = _mixed(rng, B64, 40)
        add("aws_secret_key", "ini", "[default]\nregion = eu-west-1\naws_secret_access_key = {s}", key)
        key = "django-insecure-" + _mixed(rng, LOWER_ALNUM + "!@#%^&*(-_=+)", 50)
        add("django_secret_key", "python", "DEBUG = False\nSECRET_KEY = '{s}'\nALLOWED_HOSTS = []", key)
        pw = _password(rng).replace("?", "").replace("#", "").replace("%", "")
        scheme = rng.choice(["postgresql", "mysql", "mongodb+srv", "redis", "amqp", "https"])
        add("url_password", "url", f"DATABASE_URL={scheme}://app_user:{{s}}@db.prod.internal:5432/app", pw)
        pw = _password(rng).replace("?", "").replace("#", "").replace("%", "")
        add(
            "url_password", "prose", "I connected with postgresql://reporting:{s}@10.0.3.7/analytics and it worked.", pw
        )
        token = _mixed(rng, URLSAFE, rng.randint(32, 48))
        add("bearer_opaque", "header", "curl https://api.example.org/v2/me -H 'Authorization: Bearer {s}'", token)
        add("bearer_jwt", "header", "GET /v1/orders HTTP/1.1\nAuthorization: Bearer {s}\nAccept: */*", _jwt(rng))
        basic = base64.b64encode(f"deploy:{_password(rng)}".encode()).decode()
        add("basic_auth", "header", "Authorization: Basic {s}\nContent-Type: application/json", basic)
        add(
            "private_key",
            "pem",
            "Here is the deploy key:\n{s}\nInstall it on the runner.",
            _pem(rng, rng.choice(["RSA", "EC", "OPENSSH", ""])),
        )
        key = _mixed(rng, B64, 86) + "=="
        add(
            "azure_storage_key",
            "connection_string",
            "DefaultEndpointsProtocol=https;AccountName=media;AccountKey={s};EndpointSuffix=core.windows.net",
            key,
        )
    return out


def positives() -> list[Positive]:
    rng = random.Random(SEED)
    out: list[Positive] = []
    for fmt, make in TOKEN_FORMATS.items():
        for ctx, template in TOKEN_CONTEXTS.items():
            secret = make(rng)
            out.append(Positive(fmt, ctx, template.format(s=secret), secret))
    out.extend(_generic_positives(rng))
    return out


# --- negatives -------------------------------------------------------------------------------------

#: What coding agents' notes hold: code and prose about credentials that contains none.
AGENT_LINES = [
    "password = db.Column(db.String(120))",
    "password = data.get('password')",
    "hashed_password = generate_password_hash(password, method='pbkdf2:sha256')",
    "client = WebClient(token='xoxb-your-slack-token')",
    "password_hash = db.Column(db.String(128), nullable=False)",
    "if not check_password_hash(user.password_hash, password):",
    "user.set_password(form.password.data)",
    "password = request.form['password']",
    "password = request.json.get('password')",
    "token = request.headers.get('Authorization', '').removeprefix('Bearer ')",
    "SECRET_KEY = os.environ['SECRET_KEY']",
    "SECRET_KEY = os.environ.get('SECRET_KEY', 'dev')",
    "api_key = os.getenv('OPENAI_API_KEY')",
    "OPENAI_API_KEY = os.environ['OPENAI_API_KEY']",
    'api_key: str = Field(default="", description="the provider API key")',
    "password: str = Field(..., min_length=8, max_length=128)",
    "def login(username: str, password: str) -> Token:",
    "access_token = create_access_token(identity=user.id, expires_delta=timedelta(hours=1))",
    'token = jwt.encode(payload, SECRET_KEY, algorithm="HS256")',
    'payload = jwt.decode(token, SECRET_KEY, algorithms=["HS256"])',
    "refresh_token = str(uuid.uuid4())",
    "self.password = password",
    "self.api_key = api_key or settings.API_KEY",
    "if password != confirm_password:",
    "if password == password_confirmation:",
    "const token = localStorage.getItem('token');",
    "const { password, ...rest } = req.body;",
    "password: string;",
    "password?: string | null;",
    "private readonly apiKey: string;",
    "this.apiKey = config.apiKey;",
    "let token = await getAccessToken(clientId, clientSecret);",
    "const secret = process.env.JWT_SECRET;",
    "JWT_SECRET=${JWT_SECRET}",
    "DB_PASSWORD=${DB_PASSWORD:-changeme}",
    "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}",
    "password: {{ .Values.db.password }}",
    'token: "{{ vault_token }}"',
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    'curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com/user',
    "export OPENAI_API_KEY=sk-...",
    "export ANTHROPIC_API_KEY=<your-key>",
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DATABASE_URL=postgresql://user:password@localhost:5432/app",
    "DATABASE_URL=postgres://postgres:postgres@localhost/test",
    "REDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/0",
    "SQLALCHEMY_DATABASE_URI = f'postgresql://{user}:{password}@{host}/{db}'",
    "url = f'https://{username}:{token}@github.com/org/repo.git'",
    "API_KEY=your-api-key-here",
    "SLACK_BOT_TOKEN=xoxb-your-bot-token",
    "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SECRET_KEY=change-me-in-production",
    "password: '********'",
    'password = "<password>"',
    "api_key = 'YOUR_API_KEY'",
    "token = 'REPLACE_WITH_TOKEN'",
    "The password reset token expires after 30 minutes.",
    "Store the API key in the secrets manager, never in the repo.",
    "Rotate the token: revoke the old one in settings, then update GITHUB_TOKEN in CI.",
    "We hash passwords with argon2id; the password field is never logged.",
    "tokens = tokenizer(text, return_tensors='pt')",
    "max_tokens=4096",
    "pad_token = tokenizer.eos_token",
    'tokenizer.pad_token = "<pad>"',
    "csrf_token = generate_csrf()",
    'csrf_token = "{{ csrf_token() }}"',
    "token_type = 'bearer'",
    "PASSWORD_MIN_LENGTH = 12",
    "MAX_TOKENS_PER_REQUEST = 8000",
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "password = forms.CharField(widget=forms.PasswordInput())",
    "secret = secrets.token_urlsafe(32)",
    "api_key = secrets.token_hex(16)",
    "token = secrets.token_bytes(32)",
    "password = getpass.getpass('Password: ')",
    "password = hashlib.sha256(password.encode()).hexdigest()",
    "auth = HTTPBasicAuth(username, password)",
    "session_key = request.session.session_key",
    "private_key = load_pem_private_key(data, password=None)",
    "private_key = '/etc/ssl/private/server.key'",
    "PRIVATE_KEY_PATH=./certs/dev.pem",
    "secret_name = 'prod/db/credentials'",
    "client_secret = settings.OAUTH_CLIENT_SECRET",
    "password=password,",
    "token=token,",
    "api_key=api_key,",
    "password=self.password,",
    "password=os.environ['PGPASSWORD'],",
    "requests.post(url, json={'username': username, 'password': password})",
    "{'access_token': access_token, 'token_type': 'bearer'}",
    '{"password": hashed_pw, "email": email}',
    "return {'token': token_value, 'expires_in': 3600}",
    "expect(response.body.token).toBeDefined();",
    "assert response.json()['access_token']",
    "PasswordHasher().hash(password)",
    "$password = $_POST['password'];",
    "my $password = $ENV{DB_PASSWORD};",
    'password := os.Getenv("DB_PASSWORD")',
    "token, err := jwt.ParseWithClaims(tokenString, &Claims{}, keyFunc)",
    'let api_key = std::env::var("API_KEY")?;',
    'String password = System.getenv("DB_PASSWORD");',
    'var token = Environment.GetEnvironmentVariable("TOKEN");',
    "password: process.env.DB_PASSWORD,",
    "apiKey: import.meta.env.VITE_API_KEY,",
    "secret: config.get('jwt.secret'),",
    "token: req.cookies.token,",
    "password: hashSync(password, 10),",
    "- name: GITHUB_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: gh\n      key: token",
    "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    "[client]\npassword = <set in ~/.my.cnf>",
    "Use `kaeru token add NAME` to mint a token; it is shown once.",
    "The `sk-` rule stopped at the hyphen, so `sk-ant-api03-…` keys slipped through.",
    "Authorization: Bearer eyJ… (truncated)",
    "token = next_page_token",
    "api_key_header = APIKeyHeader(name='X-API-Key')",
    "@app.post('/token', response_model=Token)",
    "class Token(BaseModel):\n    access_token: str\n    token_type: str",
    "OAuth2PasswordBearer(tokenUrl='token')",
    "password = PasswordField('Password', validators=[DataRequired()])",
    "resetPasswordToken: { type: String, select: false },",
    "password: { type: String, required: true, minlength: 8 },",
]

#: Keys and expressions that, combined, make the usual code-about-credentials lines.
_KEYS = [
    "password",
    "passwd",
    "db_password",
    "token",
    "access_token",
    "api_key",
    "apiKey",
    "client_secret",
    "secret",
    "SECRET_KEY",
    "authToken",
    "refresh_token",
]
_EXPRESSIONS = [
    "os.environ['{K}']",
    "os.getenv('{K}')",
    "config['{k}']",
    "settings.{K}",
    "request.form.get('{k}')",
    "kwargs.pop('{k}', None)",
    "None",
    "''",
    "get_{k}()",
    "self.{k}",
    "args.{k}",
    "process.env.{K}",
    "await vault.read('{k}')",
    '"${{{K}}}"',
    '"<{k}>"',
    "'your-{k}-here'",
    "'changeme'",
    "'xxxxxxxxxxxx'",
    "{k}_from_env",
    'cfg.get("{k}", default=None)',
]


def _templated() -> list[Negative]:
    out: list[Negative] = []
    for key in _KEYS:
        for expr in _EXPRESSIONS:
            value = expr.format(k=key.lower(), K=key.upper())
            out.append(Negative("templated", f"{key} = {value}"))
    return out


def negatives() -> list[Negative]:
    rows = [json.loads(line) for line in (HERE / "negatives.jsonl").read_text(encoding="utf-8").splitlines()]
    out = [Negative(row["origin"], row["text"]) for row in rows]
    out.extend(Negative("agent-notes", line) for line in AGENT_LINES)
    out.extend(_templated())
    return out


def caught(text: str, secret: str, redacted: str) -> bool:
    """The whole secret is gone and the text around it is kept."""
    head, _, tail = text.partition(secret)
    return secret not in redacted and redacted.startswith(head) and redacted.endswith(tail)
