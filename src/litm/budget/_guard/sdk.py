"""What the guard needs to know of one SDK, and how it reads the SDK's request options as a :class:`Call`.

Both official SDKs (``openai``, ``anthropic``) send every HTTP request through one method,
``client.request(cast_to, options, stream=...)``, with the endpoint in ``options.url`` and the body in
``options.json_data`` (plus ``options.extra_json``, the caller's ``extra_body``, merged over it on the
wire). The guard reads the same two to build the :class:`~litm.budget._guard.pipeline.Call`, so what it
counts is what would be sent, and writes a compacted body back the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

from litm.budget._guard.endpoints import Endpoints, relative_path
from litm.budget._guard.pipeline import Call
from litm.errors import UngatedRequestError

__all__ = ["Sdk", "SdkOptions", "call_of", "detect_sdk", "options_for"]


class SdkOptions(Protocol):
    """What the guard reads of the SDKs' request options (their pydantic ``FinalRequestOptions``)."""

    @property
    def url(self) -> str: ...

    @property
    def method(self) -> str: ...

    @property
    def json_data(self) -> object: ...

    def model_copy(self, *, update: Mapping[str, object] | None = None) -> Self: ...


OptionsT = TypeVar("OptionsT", bound=SdkOptions)


@dataclass(frozen=True)
class Sdk:
    """One SDK's facts: its name, its endpoints, whether the client is async, its "leave out" markers, and
    the provider the client bills through (the price table's name: ``openai``, ``azure``, ``anthropic``)."""

    name: str
    endpoints: Endpoints
    is_async: bool
    #: Values the SDK drops from a body when merging ``extra_body`` (its ``Omit`` / ``NotGiven`` types).
    omitted: tuple[type, ...] = ()
    provider: str = ""


def detect_sdk(client: object, name: str, sync_class: str, async_class: str, endpoints: Endpoints) -> Sdk | None:
    """The :class:`Sdk` of ``client`` when it is an instance of SDK ``name``'s sync or async client class."""
    if not any(c.__module__.split(".")[0] == name for c in type(client).__mro__):
        return None
    # The SDKs are optional dependencies: one is imported only for a client that already comes from it.
    module = importlib.import_module(name)
    omitted = (module.Omit, module.NotGiven)
    # Azure's OpenAI clients subclass OpenAI's and bill at Azure's prices.
    provider = "azure" if any(c.__name__.startswith(("Azure", "AsyncAzure")) for c in type(client).__mro__) else name
    for class_name, is_async in ((sync_class, False), (async_class, True)):
        if isinstance(client, getattr(module, class_name)):
            return Sdk(name, endpoints, is_async=is_async, omitted=omitted, provider=provider)
    return None


def call_of(sdk: Sdk, options: SdkOptions, stream: bool, base_url: object) -> Call | None:
    """The call ``options`` would make, or None when it passes ungated; refuses what cannot be gated."""
    path = relative_path(str(options.url), base_url)
    api = sdk.endpoints.route(str(options.method), path)
    if api is None:
        return None
    if getattr(options, "content", None) is not None or getattr(options, "files", None):
        raise UngatedRequestError(
            f"a guarded client refuses a raw or multipart body for {path}: the token gate counts JSON requests "
            "only, so nothing was sent",
            path=path,
        )
    body = _merged(options.json_data, getattr(options, "extra_json", None), sdk.omitted)
    if body is None:
        raise UngatedRequestError(f"the request to {path} has no JSON body to count; nothing was sent", path=path)
    return Call(api=api, path=path, body=body, stream=bool(stream or body.get("stream")))


def options_for(options: OptionsT, call: Call, original: Mapping[str, object]) -> OptionsT:
    """``options`` carrying ``call.body``: the same object when the gate kept the body as it was."""
    if call.body is original:
        return options
    # extra_body is already merged into the body, so it must not be merged a second time.
    return options.model_copy(update={"json_data": dict(call.body), "extra_json": None})


def _merged(json_data: object, extra: object, omitted: tuple[type, ...]) -> dict[str, object] | None:
    if json_data is None and extra is None:
        return None
    if (json_data is not None and not isinstance(json_data, Mapping)) or (
        extra is not None and not isinstance(extra, Mapping)
    ):
        return None
    merged = {**(json_data or {}), **(extra or {})}  # the SDK's rule: extra_body wins on a shared key
    return {k: v for k, v in merged.items() if not (omitted and isinstance(v, omitted))}
