"""The real test day: two days of a wearer's life as hard as life is, beside the clean day (make_day.DAY).

    cd benchmarks && ../.venv/bin/python -m testday.make_day --day real [OUT_DIR]

People talk at their own rates (espeak-ng's default 175 words a minute and faster, no gaps added), the
people the wearer talks to stand a metre or a street away (reverberation, distance) or call on the phone,
some talk over each other, and every place has its sound: a kitchen's extractor and cups, street
traffic (the walk footage's own recording), a café's other guests talking, an office fan, at 5-20 dB
signal-to-noise. Pictures are taken in poor light, smeared by head movement, or half out of view.
The speech recogniser does not hear all of it: `questions_real.jsonl` asks in the words a person would
use, and `test_day.py --day real` prints what recognition heard against this script.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from .make_day import Board, Look, Photo, Recording, Scene, Voice, Walk

QUESTIONS = Path(__file__).resolve().parent / "questions_real.jsonl"

ME = Voice("wearer", "en-gb", 175, "near")
SAM = Voice("Sam", "en-us+f3", 185, "room")  # the wearer's partner, at home
TOM = Voice("Tom", "en-us+m3", 190, "far")  # a neighbour, met on the street
ANIKA = Voice("Anika", "en+f2", 180, "room")
DECLAN = Voice("Declan", "en-gb-scotland+m2", 185, "far")  # across the meeting table
MUM = Voice("Mum", "en+f4", 175, "phone")
BARISTA = Voice("barista", "en-gb-x-rp+m4", 185, "far")

DARK, BLURRED, HALF = Look(light=0.45), Look(blur=9), Look(cut=0.18)


def _at(day: int, hh: int, mm: int) -> datetime:
    return datetime(2026, 11, 29, hh, mm) + timedelta(days=day)  # day 1 = Monday 30 November 2026, day 2 = Tuesday 1 December


REAL_DAY: tuple[Recording, ...] = (
    Recording(
        "20261130_074000",
        _at(1, 7, 40),
        (
            Scene(
                15,
                Photo("coffee"),
                (
                    (1.0, SAM, "Morning! Remember, the vet appointment for Biscuit is on Thursday at four."),
                    (6.5, ME, "Thursday at four, okay. Have you seen my car keys?"),
                ),
                noise="kitchen",
                snr_db=17,
                look=DARK,
            ),
            Scene(
                15,
                Board(("PHARMACY", "PICK UP PRESCRIPTION"), paper=(250, 235, 120), wall=(210, 210, 205)),
                (
                    (0.5, SAM, "Your car keys are in the pocket of your blue jacket."),
                    (5.5, ME, "Thanks. I will pick up the prescription at lunchtime."),
                ),
                noise="kitchen",
                snr_db=15,
                look=BLURRED,
            ),
        ),
    ),
    Recording(
        "20261130_083000",
        _at(1, 8, 30),
        (
            Scene(
                15,
                Walk(0.0),
                (
                    (1.5, TOM, "Morning! You can borrow my motorcycle for the weekend."),
                    (6.5, ME, "Brilliant, thanks Tom. I will bring it back on Sunday evening."),
                ),
                noise="street",
                snr_db=6,
            ),
            Scene(
                15,
                Walk(6.0, sign=("ELM ROAD",)),
                ((1.0, TOM, "The spare helmet is in my garage."), (2.4, ME, "Great, see you later then.")),  # over his end
                noise="street",
                snr_db=8,
            ),
        ),
    ),
    Recording(
        "20261130_100000",
        _at(1, 10, 0),
        (
            Scene(
                15,
                Board(("QUARTERLY REVIEW", "BUDGET 48K", "ROOM 7B"), ink=(20, 40, 160)),
                (
                    (1.0, ANIKA, "The client presentation has moved to Wednesday afternoon."),
                    (3.2, DECLAN, "Then I will send Anika the slides on Tuesday night."),  # talks over her end
                ),
                noise="office",
                snr_db=18,
                look=HALF,
            ),
            Scene(
                15,
                Board(("QUARTERLY REVIEW", "BUDGET 48K", "ROOM 7B"), ink=(20, 40, 160), wall=(170, 170, 160)),
                (
                    (1.0, DECLAN, "We have forty eight thousand for the whole quarter."),
                    (7.0, ANIKA, "Let us keep the product launch in March, Declan."),
                ),
                noise="office",
                snr_db=15,
            ),
        ),
    ),
    Recording(
        "20261130_124500",
        _at(1, 12, 45),
        (
            Scene(
                15,
                Photo("coffee"),
                (
                    (1.0, ME, "A flat white and a blueberry muffin, please."),
                    (5.0, BARISTA, "That is six euros twenty."),
                ),
                noise="cafe",
                snr_db=10,
            ),
            Scene(
                15,
                Board(
                    ("CAFE NOVA", "FLAT WHITE 3.40", "SOUP: LENTIL"), ink=(240, 240, 240), paper=(40, 70, 50), wall=(120, 90, 60)
                ),
                ((4.0, BARISTA, "The lentil soup is very good today."),),
                noise="cafe",
                snr_db=10,
                look=BLURRED,
            ),
        ),
    ),
    Recording(
        "20261130_130500",
        _at(1, 13, 5),
        (
            Scene(
                15,
                Board(
                    ("DEPARTURES", "DUBLIN 13:15", "GALWAY 14:05"), ink=(255, 170, 0), paper=(15, 15, 15), wall=(120, 140, 150)
                ),
                ((2.0, ME, "I need to catch the Dublin train."),),
                noise="street",
                snr_db=10,
                look=DARK,
            ),
            Scene(15, Walk(3.0, mirror=True), ((2.0, ME, "Platform four, just in time."),), noise="street", snr_db=9),
        ),
    ),
    Recording(
        "20261130_183000",
        _at(1, 18, 30),
        (
            Scene(
                15,
                Photo("chelsea"),  # the cat, Biscuit
                (
                    (1.0, MUM, "Hi love, it is Mum. Do not forget that Granny's birthday is on Saturday."),
                    (8.0, ME, "I will not forget. I will buy her some tulips."),
                ),
                noise="kitchen",
                snr_db=20,
            ),
            Scene(
                15, Photo("chelsea"), ((2.0, ME, "Biscuit, stop scratching the sofa!"),), noise="kitchen", snr_db=19, look=BLURRED
            ),
        ),
    ),
    Recording(
        "20261130_223000",
        _at(1, 22, 30),
        (
            Scene(
                15,
                Board(("REGION-BASED SEGMENTATION", "SPLITS AN IMAGE", "INTO REGIONS"), paper=(250, 250, 245), wall=(90, 80, 70)),
                ((2.0, ME, "Reading this old printed page before bed."),),
                noise="office",
                snr_db=20,
                look=DARK,
            ),
        ),
    ),
    Recording(
        "20261201_075000",
        _at(2, 7, 50),
        (
            Scene(
                15,
                Board(("TUESDAY", "BINS OUT"), paper=(180, 230, 180), wall=(210, 210, 205)),
                (
                    (1.0, ME, "I am hanging my car keys on the hook by the garage door."),
                    (6.5, SAM, "Good, I need the car at noon."),
                ),
                noise="kitchen",
                snr_db=15,
                look=HALF,
            ),
            Scene(
                15,
                Photo("coffee"),
                ((2.0, SAM, "Did you take your vitamins?"), (5.5, ME, "Yes, with breakfast.")),
                noise="kitchen",
                snr_db=17,
            ),
        ),
    ),
    Recording(
        "GX010077",
        _at(2, 9, 20),
        (
            Scene(
                15,
                Photo("motorcycle"),
                ((1.5, ME, "Tom's motorcycle is parked outside the bakery."),),
                noise="street",
                snr_db=8,
                look=BLURRED,
            ),
            Scene(
                15,
                Walk(8.0, sign=("BAKERY",)),
                ((2.0, TOM, "Ride carefully, the brakes are a bit soft."),),
                noise="street",
                snr_db=7,
            ),
        ),
        dated_by="metadata",
    ),
    Recording(
        "20261201_123000",
        _at(2, 12, 30),
        (
            Scene(
                15,
                Board(("NATIONAL GALLERY", "MODERN ART", "CLOSES 17:30"), ink=(255, 255, 255), paper=(120, 20, 30)),
                ((2.0, ANIKA, "The exhibition closes at half past five."), (7.0, ME, "Thanks Anika, we have plenty of time.")),
                noise="cafe",
                snr_db=12,
            ),
            Scene(
                15,
                Photo("astronaut"),
                (
                    (1.0, ANIKA, "This portrait of the astronaut is my favourite."),
                    (6.0, ME, "I will buy the postcard for my niece."),
                ),
                noise="cafe",
                snr_db=12,
                look=DARK,
            ),
        ),
    ),
    Recording(
        "20261201_181500",
        _at(2, 18, 15),
        (
            Scene(
                15,
                Photo("chelsea"),
                ((1.0, SAM, "Dinner is mushroom risotto tonight."), (5.5, ME, "Lovely, I will open the red wine.")),
                noise="kitchen",
                snr_db=19,
            ),
            Scene(
                15,
                Board(("RISOTTO", "STIR 18 MIN"), paper=(255, 250, 235), wall=(200, 170, 140)),
                ((1.0, SAM, "The plumber is coming on Friday at nine."), (6.0, ME, "Okay, then I will work from home.")),
                noise="kitchen",
                snr_db=16,
                look=BLURRED,
            ),
        ),
    ),
)
