"""Events: the in-process bus (`bus`) and its JSON-lines bridge across processes (`log`).

Foundation layer: any component may publish; only the servers subscribe.
"""

from neuralmind.events.event_bus import KINDS, Event, EventBus, bus, publish

__all__ = ["KINDS", "Event", "EventBus", "bus", "publish"]
